package health

import (
	"encoding/json"
	"fmt"
)

// Response is a node's answer to a health request, encoded as JSON.
//
// The first six fields are those of the specification, with exactly its
// JSON names. Epoch and Error are additions, omitted when zero, so a client
// that only knows the specification reads every reply unchanged.
type Response struct {
	// NodeID is the answering node.
	NodeID string `json:"nodeId"`
	// Role is the node's role as last set (by SetRole or the Adapter):
	// "PRIMARY" or "PASSIVE" when it follows a cluster.Node.
	Role string `json:"role"`
	// Leader is the NodeID of the leader as this node knows it; empty when
	// nobody leads.
	Leader string `json:"leader"`
	// UptimeMs is how long the Checker has been running, in milliseconds.
	UptimeMs int64 `json:"uptimeMs"`
	// Timestamp is when the response was built: Unix time in milliseconds,
	// from the node's wall clock.
	Timestamp int64 `json:"timestamp"`
	// Custom holds the values set with SetCustom; omitted when empty.
	Custom map[string]any `json:"custom,omitempty"`

	// Epoch is the lease epoch (fencing token) the node knows, read when the
	// request arrives from the source given to Adapter.Bind or
	// Checker.SetEpochFunc; omitted when 0 (no source, or no lease seen).
	// Nodes that report a lower epoch than their peers lag behind.
	Epoch int64 `json:"epoch,omitempty"`
	// Error is set, and the fields above other than NodeID and Timestamp are
	// zero, when the node could not answer: the request was malformed or too
	// large, or a custom value cannot be encoded as JSON. Omitted otherwise.
	Error string `json:"error,omitempty"`
}

// IsLeader reports whether the node says it is the leader (Role "PRIMARY").
func (r Response) IsLeader() bool { return r.Role == rolePrimary }

// errorReply is the JSON of an error reply: a Response with only NodeID,
// Timestamp and Error.
type errorReply struct {
	NodeID    string `json:"nodeId"`
	Timestamp int64  `json:"timestamp"`
	Error     string `json:"error"`
}

// decodeResponse decodes a reply. An error reply is returned as a Response
// along with an error wrapping ErrRemote.
func decodeResponse(data []byte) (Response, error) {
	var r Response
	if err := json.Unmarshal(data, &r); err != nil {
		return Response{}, fmt.Errorf("%w: %w", ErrInvalidResponse, err)
	}
	if r.NodeID == "" && r.Error == "" {
		return Response{}, fmt.Errorf("%w: reply has no nodeId", ErrInvalidResponse)
	}
	if r.Error != "" {
		return r, fmt.Errorf("%w: node %q: %s", ErrRemote, r.NodeID, r.Error)
	}
	return r, nil
}
