package wire

import "time"

// The built-in status request: every campaigning node answers what it
// knows on StatusSubject and ClusterStatusSubject.

// Roles of a StatusReply.
const (
	StatusLeader   = "leader"    // holds a live tenure
	StatusFollower = "follower"  // campaigns when the lease is free
	StatusNotReady = "not ready" // its ReadinessCheck fails: it does not campaign
)

// StatusReply is a node's answer to a status request: its own view.
type StatusReply struct {
	Node string `json:"node"`
	// Role is StatusLeader, StatusFollower or StatusNotReady.
	Role string `json:"role"`
	// Leader and Epoch are the leader and epoch the node knows
	// (Node.Leader, Node.Epoch).
	Leader string `json:"leader,omitempty"`
	Epoch  int64  `json:"epoch,omitempty"`
	// NotReady is Node.Ready's error, when the node is not ready.
	NotReady string `json:"not_ready,omitempty"`
	// Metadata is the node's Config.Metadata.
	Metadata map[string]string `json:"metadata,omitempty"`
	// StartedAt is when the node started, by its own wall clock.
	StartedAt time.Time `json:"started_at"`
	// Instance names the process (Lease.Instance): two replies for one
	// NodeID with two instances are two processes given the same NodeID.
	Instance string `json:"instance,omitempty"`
}
