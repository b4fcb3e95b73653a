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
const MaxControlRequestSize = wire.MaxControlRequestSize

// StepDownRequest asks the leader to step down (see ControlSubject): To
// names a successor, Reason is "operator" (the default) or "priority" (a
// node of higher Priority asking; the leader checks it), Epoch makes the
// request conditional on the leader's epoch. An empty payload is a
// request with no preferred successor. One definition, in the wire
// vocabulary, for the leader, the CLI and the agent.
type StepDownRequest = wire.StepDownRequest

// StepDownReply is the answer to a StepDownRequest: OK, the Node that
// answered, the Epoch it gave up and the successor it named (To); with an
// Error, the Leader the node knows.
type StepDownReply = wire.StepDownReply

const (
	reasonOperator = wire.ReasonOperator
	reasonPriority = wire.ReasonPriority
)

// decodeStepDown parses and checks a request payload
// (wire.DecodeStepDown, which the leader uses).
func decodeStepDown(data []byte) (StepDownRequest, error) {
	return wire.DecodeStepDown(data)
}
