package wire

import (
	"encoding/json"
	"fmt"
)

// StepDownRequest asks the leader to step down (see ControlSubject and
// NodeControlSubject). An empty payload is a request with no preferred
// successor. One definition for the leader, the CLI and the agent.
type StepDownRequest struct {
	// To, if set, names the node to hand over to: for a short while after
	// the release only that node campaigns.
	To string `json:"to,omitempty"`
	// Reason is "operator" (the default) or "priority" (a node of higher
	// Priority asking for the lease; the leader checks Priority).
	Reason string `json:"reason,omitempty"`
	// Priority is the asking node's Config.Priority, with reason "priority".
	Priority int `json:"priority,omitempty"`
	// Epoch, if set, makes the request conditional: only a leader of this
	// epoch steps down, so a request never reaches the next leader by mistake.
	Epoch int64 `json:"epoch,omitempty"`
}

// StepDownReply is the answer to a StepDownRequest: OK, the Node that
// answered, the Epoch it gave up and the successor it named (To); with an
// Error, the Leader the node knows.
type StepDownReply struct {
	OK     bool   `json:"ok"`
	Node   string `json:"node"`             // the node that answered
	Epoch  int64  `json:"epoch,omitempty"`  // the epoch it gave up
	To     string `json:"to,omitempty"`     // the successor it named
	Leader string `json:"leader,omitempty"` // with an error: the leader the node knows
	Error  string `json:"error,omitempty"`
}

// The reasons of a StepDownRequest.
const (
	ReasonOperator = "operator"
	ReasonPriority = "priority"
)

// MaxControlRequestSize is the largest step-down request accepted.
const MaxControlRequestSize = 1024

// DecodeStepDown parses and checks a request payload.
func DecodeStepDown(data []byte) (StepDownRequest, error) {
	var req StepDownRequest
	if len(data) > MaxControlRequestSize {
		return req, fmt.Errorf("request is %d bytes, at most %d", len(data), MaxControlRequestSize)
	}
	if len(trimSpace(data)) > 0 {
		if err := json.Unmarshal(data, &req); err != nil {
			return req, fmt.Errorf("invalid request: %w", err)
		}
	}
	if req.To != "" {
		if err := CheckNodeID("to", req.To); err != nil {
			return req, err
		}
	}
	if req.Epoch < 0 {
		return req, fmt.Errorf("invalid request: negative epoch %d", req.Epoch)
	}
	switch req.Reason {
	case "":
		req.Reason = ReasonOperator
	case ReasonOperator, ReasonPriority:
	default:
		return req, fmt.Errorf("invalid request: unknown reason %q", req.Reason)
	}
	return req, nil
}
