package cluster

import (
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// ControlSubject is where the current leader of a cluster answers
// step-down requests: "cluster.<ClusterID>.control.stepdown". Only the
// leader replies; with no leader the request times out. Who may publish
// here is a matter of NATS permissions.
func ControlSubject(clusterID string) string { return wire.ControlSubject(clusterID) }

// NodeControlSubject is where one node answers step-down requests:
// "cluster.<ClusterID>.control.<NodeIDToken(NodeID)>.stepdown", so node
// "db1.example.com" answers on "cluster.<ClusterID>.control.db1=example=com.stepdown".
// A node that does not lead replies with an error naming the leader it knows.
func NodeControlSubject(clusterID, nodeID string) string {
	return wire.NodeControlSubject(clusterID, nodeID)
}

// MaxControlRequestSize is the largest step-down request accepted.
const MaxControlRequestSize = 1024

// StepDownRequest asks the leader to step down. An empty payload is a
// request with no preferred successor.
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

// StepDownReply is the answer to a StepDownRequest.
type StepDownReply struct {
	OK     bool   `json:"ok"`
	Node   string `json:"node"`             // the node that answered
	Epoch  int64  `json:"epoch,omitempty"`  // the epoch it gave up
	To     string `json:"to,omitempty"`     // the successor it named
	Leader string `json:"leader,omitempty"` // with an error: the leader the node knows
	Error  string `json:"error,omitempty"`
}

const (
	reasonOperator = wire.ReasonOperator
	reasonPriority = wire.ReasonPriority
)

// decodeStepDown parses and checks a request payload
// (wire.DecodeStepDown, which the leader uses).
func decodeStepDown(data []byte) (StepDownRequest, error) {
	req, err := wire.DecodeStepDown(data)
	return StepDownRequest(req), err
}
