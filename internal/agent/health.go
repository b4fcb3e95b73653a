package agent

import (
	"context"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/health"
)

// healthHooks forward the node's events to the member's health adapter
// once it exists: the checker answers on the node's connection, which
// exists only once the node has started.
type healthHooks struct{ m *member }

func (h healthHooks) adapter() *health.Adapter {
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	return h.m.health
}

func (h healthHooks) OnBecomeLeader(ctx context.Context) error {
	if a := h.adapter(); a != nil {
		return a.OnBecomeLeader(ctx)
	}
	return nil
}

func (h healthHooks) OnLoseLeadership(ctx context.Context) error {
	if a := h.adapter(); a != nil {
		return a.OnLoseLeadership(ctx)
	}
	return nil
}

func (h healthHooks) OnLeaderChange(ctx context.Context, nodeID string) error {
	if a := h.adapter(); a != nil {
		return a.OnLeaderChange(ctx, nodeID)
	}
	return nil
}

// startHealth makes node answer health queries (go-cluster status and
// health), as every node of the library's own programs does.
func (m *member) startHealth(node *cluster.Node) {
	c, err := health.NewChecker(health.Config{ClusterID: node.Config().ClusterID, NodeID: node.Config().NodeID, Conn: node.Conn(), Logger: m.log})
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = c.Start(ctx)
		cancel()
	}
	if err != nil {
		m.log.Warn("health queries will not be answered", "err", err)
		return
	}
	a := health.NewAdapter(c)
	if err := a.Bind(node); err != nil {
		c.Stop()
		m.log.Warn("health queries will not be answered", "err", err)
		return
	}
	m.mu.Lock()
	m.health, m.checker = a, c
	m.mu.Unlock()
	// The events before the adapter was there: the node's state now.
	c.SetRole(node.Role().String())
	c.SetLeader(node.Leader())
	m.publish()
}

// stopHealth stops answering health queries.
func (m *member) stopHealth() {
	m.mu.Lock()
	c := m.checker
	m.health, m.checker = nil, nil
	m.mu.Unlock()
	if c != nil {
		c.Stop()
	}
}
