package wire

import (
	"encoding/json"
	"fmt"
)

// StepDownRequest and StepDownReply are cluster's types of the same names
// as the election reads and writes them: the same fields and JSON
// (cluster converts to and from them).
type StepDownRequest struct {
	To       string `json:"to,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Priority int    `json:"priority,omitempty"`
	Epoch    int64  `json:"epoch,omitempty"`
}

// StepDownReply is the answer to a StepDownRequest.
type StepDownReply struct {
	OK     bool   `json:"ok"`
	Node   string `json:"node"`
	Epoch  int64  `json:"epoch,omitempty"`
	To     string `json:"to,omitempty"`
	Leader string `json:"leader,omitempty"`
	Error  string `json:"error,omitempty"`
}

// The reasons of a StepDownRequest.
const (
	ReasonOperator = "operator"
	ReasonPriority = "priority"
)

// MaxControlRequestSize is cluster.MaxControlRequestSize.
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
