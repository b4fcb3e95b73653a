package agent

// The member's part in the standings (standing.go) and the deference
// (deference.go): what it announces, and the readiness it adds.

import (
	"context"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
)

// startStandings starts announcing and hearing standings on the node's
// connection, once the node has started.
func (m *member) startStandings(node *cluster.Node) {
	ttl := node.Config().LeaseTTL
	d := newDeference(ttl, m.log)
	s := startStandings(node.Conn(), node.Config().ClusterID, node.Config().NodeID, ttl, m.standing, m.log)
	m.mu.Lock()
	m.standings, m.deference = s, d
	m.mu.Unlock()
}

// stopStandings stops them, if started.
func (m *member) stopStandings() {
	m.mu.Lock()
	s := m.standings
	m.standings = nil
	m.mu.Unlock()
	if s != nil {
		s.stop()
	}
}

// standing is this node's Standing now.
func (m *member) standing() Standing {
	m.mu.Lock()
	node, r, cfg := m.node, m.ready, m.cfg
	m.mu.Unlock()
	prio, _ := m.priorityNow()
	_, notReady := r.evaluate()
	return Standing{Node: cfg.Election.NodeID, Priority: prio,
		Ready: notReady == nil, Leading: node != nil && node.IsLeader()}
}

// holdBack is the readiness the deference adds to the checks': why this
// node leaves the election to a peer now, nil when it does not. Until
// the standings start (the node is starting) it holds back for nobody: a
// node just started must be able to take a hand-over at once (a rolling
// restart), and a new bucket's first election, or a takeover after a
// reconnect, waits a lease_ttl, in which the peers are heard.
func (m *member) holdBack(now time.Time) error {
	m.mu.Lock()
	s, d := m.standings, m.deference
	m.mu.Unlock()
	if s == nil {
		return nil
	}
	online, peers := s.peers(now)
	return d.check(online, m.standing(), peers)
}

// standingHooks announce a change of leadership at once.
type standingHooks struct{ m *member }

func (h standingHooks) changed() {
	h.m.mu.Lock()
	s := h.m.standings
	h.m.mu.Unlock()
	if s != nil {
		s.changed()
	}
}

func (h standingHooks) OnBecomeLeader(context.Context) error {
	h.changed()
	return nil
}

func (h standingHooks) OnLoseLeadership(context.Context) error {
	h.changed()
	return nil
}

func (standingHooks) OnLeaderChange(context.Context, string) error { return nil }
