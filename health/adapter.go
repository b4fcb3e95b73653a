package health

import (
	"context"
	"fmt"

	cluster "github.com/ozanturksever/go-cluster"
)

// NodeInfo is what an Adapter reads from the node it follows; *cluster.Node
// implements it. Config names the node (ClusterID, NodeID); Ready returns
// nil when the node may lead (see cluster.Node.Ready).
type NodeInfo interface {
	Config() cluster.Config
	Epoch() int64
	Ready() error
}

// Adapter is a cluster.Hooks that keeps a Checker's role and leader in step
// with a cluster.Node, so the application never calls SetRole or SetLeader:
//
//	checker, _ := health.NewChecker(health.Config{ClusterID: "orders", NodeID: "node-1", Conn: nc})
//	adapter := health.NewAdapter(checker)
//	node, _ := cluster.NewNode(cfg, cluster.ComposeHooks(appHooks, adapter))
//	_ = adapter.Bind(node) // responses carry the node's epoch and readiness
//	_ = checker.Start(ctx)
//	_ = node.Start(ctx)
//
// The node needs its hooks when it is made and the Adapter reads the node's
// epoch and readiness, hence the two steps. Without Bind everything works
// but responses have no epoch and always read as ready.
//
// Role and leader follow the hooks, so a response tells what the node has
// told the application: OnBecomeLeader sets role "PRIMARY" (the leader) and
// the leader to this node; OnLoseLeadership sets role "PASSIVE" (a
// follower) and clears the leader if it was this node; OnLeaderChange sets
// the leader. The epoch and NotReady (from the node's ReadinessCheck, see
// cluster.Node.Ready) are read from the bound node on each request. Place the Adapter anywhere in ComposeHooks;
// its hooks are quick and never fail.
type Adapter struct {
	checker *Checker
}

var _ cluster.Hooks = (*Adapter)(nil)

// NewAdapter returns an Adapter that updates c.
func NewAdapter(c *Checker) *Adapter { return &Adapter{checker: c} }

// Bind makes responses carry n's epoch and readiness (n.Epoch() and
// n.Ready(), read per request; see Response.NotReady). It
// checks that n has the Checker's ClusterID and NodeID: the error wraps
// ErrInvalidConfig when they differ or n is nil.
func (a *Adapter) Bind(n NodeInfo) error {
	if node, ok := n.(*cluster.Node); n == nil || ok && node == nil {
		return fmt.Errorf("health: bind: %w: nil node", ErrInvalidConfig)
	}
	if cfg := n.Config(); cfg.ClusterID != a.checker.ClusterID() || cfg.NodeID != a.checker.NodeID() {
		return fmt.Errorf("health: bind: %w: node is %s/%s, checker is %s/%s", ErrInvalidConfig,
			cfg.ClusterID, cfg.NodeID, a.checker.ClusterID(), a.checker.NodeID())
	}
	a.checker.SetEpochFunc(n.Epoch)
	a.checker.SetReadyFunc(n.Ready)
	return nil
}

// OnBecomeLeader reports this node as the leader: role PRIMARY, leader itself.
func (a *Adapter) OnBecomeLeader(context.Context) error {
	self := a.checker.NodeID()
	a.checker.state.update(func(role, leader *string) {
		*role, *leader = rolePrimary, self
	})
	return nil
}

// OnLoseLeadership reports this node as a follower (role PASSIVE), no
// longer the leader.
func (a *Adapter) OnLoseLeadership(context.Context) error {
	self := a.checker.NodeID()
	a.checker.state.update(func(role, leader *string) {
		*role = rolePassive
		if *leader == self {
			*leader = ""
		}
	})
	return nil
}

// OnLeaderChange reports nodeID as the leader ("" when nobody leads).
func (a *Adapter) OnLeaderChange(_ context.Context, nodeID string) error {
	a.checker.SetLeader(nodeID)
	return nil
}
