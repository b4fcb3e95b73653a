package cluster

import (
	"context"
	"errors"

	"github.com/nats-io/nats.go"
)

// Node is one member of a cluster. TEMPORARY STUB: the implementation is being written.
type Node struct {
	cfg      Config
	hooks    Hooks
	campaign bool
}

// NewNode returns a Node that campaigns for leadership once started.
func NewNode(cfg Config, hooks Hooks) (*Node, error) { return nil, errors.New("todo") }

// NewObserver returns a Node that follows the leader and never campaigns.
func NewObserver(cfg Config, hooks Hooks) (*Node, error) { return nil, errors.New("todo") }

// Start connects and starts following/campaigning.
func (n *Node) Start(ctx context.Context) error { return errors.New("todo") }

// Stop stops the node.
func (n *Node) Stop(ctx context.Context) error { return errors.New("todo") }

// StepDown gives up leadership.
func (n *Node) StepDown(ctx context.Context) error { return errors.New("todo") }

// ValidateLeadership proves tenure with a renewal and returns the epoch.
func (n *Node) ValidateLeadership(ctx context.Context) (int64, error) { return 0, errors.New("todo") }

// WaitForLeader blocks until a leader is known.
func (n *Node) WaitForLeader(ctx context.Context) (string, error) { return "", errors.New("todo") }

// Role returns the current role.
func (n *Node) Role() Role { return RolePassive }

// IsLeader reports whether this node is the leader.
func (n *Node) IsLeader() bool { return false }

// Leader returns the current leader's NodeID.
func (n *Node) Leader() string { return "" }

// Epoch returns the current epoch.
func (n *Node) Epoch() int64 { return 0 }

// NodeID returns the node's ID.
func (n *Node) NodeID() string { return n.cfg.NodeID }

// ClusterID returns the cluster's ID.
func (n *Node) ClusterID() string { return n.cfg.ClusterID }

// Lease returns the last lease record observed.
func (n *Node) Lease() (Lease, bool) { return Lease{}, false }

// Conn returns the NATS connection in use (nil before Start).
func (n *Node) Conn() *nats.Conn { return nil }

// Done is closed when the node stops, by Stop or by a permanent error.
func (n *Node) Done() <-chan struct{} { return nil }

// Err returns why the node stopped: nil after Stop, a permanent error otherwise.
func (n *Node) Err() error { return nil }
