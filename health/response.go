package health

import (
	"encoding/json"
	"fmt"
)

// Response is a node's answer to a health request, encoded as JSON.
//
// The first six fields are those of the specification, with exactly its
// JSON names. Epoch, NotReady and Error are additions, omitted when zero, so
// a client that only knows the specification reads every reply unchanged,
// and a reply of a node built before an addition reads as its zero value.
type Response struct {
	// NodeID is the answering node.
	NodeID string `json:"nodeId"`
	// Role is the node's role as last set (by SetRole or the Adapter):
	// when it follows a cluster.Node, "PRIMARY" for the leader or
	// "PASSIVE" for a follower (cluster.Role's String values, the
	// specification's wire format).
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
	// NotReady says why the node may not lead, as far as its own
	// cluster.Config.ReadinessCheck goes: the text of cluster.Node.Ready's
	// error (it starts with "cluster: not ready: " and ends with the last
	// check's error), read when the request arrives from the source given to
	// Adapter.Bind or Checker.SetReadyFunc. Empty, and omitted, when the
	// node is ready, has no ReadinessCheck, or the Checker has no source.
	// A not-ready node does not campaign and would not take a handover.
	//
	// It is "not ready" rather than "ready" so that the field's absence
	// means ready: nodes without a ReadinessCheck send the specification's
	// JSON unchanged, and a reply of a node built before the field existed
	// reads as ready, as such replies always did. A client therefore cannot
	// tell such a node from a ready one.
	NotReady string `json:"notReady,omitempty"`
	// Error is set, and the fields above other than NodeID, Timestamp and
	// NotReady are zero, when the node could not answer: the request was
	// malformed or too large, or a custom value cannot be encoded as JSON.
	// Omitted otherwise.
	Error string `json:"error,omitempty"`
}

// IsLeader reports whether the node says it is the leader (Role "PRIMARY").
// Otherwise it is a follower, when the role follows a cluster.Node.
func (r Response) IsLeader() bool { return r.Role == rolePrimary }

// IsReady reports whether the node says it may lead as far as its
// ReadinessCheck goes (NotReady is empty). See NotReady for nodes that do
// not report it.
func (r Response) IsReady() bool { return r.NotReady == "" }

// errorReply is the JSON of an error reply: a Response with only NodeID,
// Timestamp, NotReady and Error.
type errorReply struct {
	NodeID    string `json:"nodeId"`
	Timestamp int64  `json:"timestamp"`
	NotReady  string `json:"notReady,omitempty"`
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
