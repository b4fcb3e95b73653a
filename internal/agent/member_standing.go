package agent

// The member's part in the standings (standing.go) and the deference
// (deference.go): what it announces, and the readiness it adds.

import (
	"context"
	"fmt"
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
		Ready: notReady == nil, Leading: node != nil && node.IsLeader(), VIPFailed: m.vips.failed() != nil}
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
	if err := m.vipFailedHoldBack(peers); err != nil {
		return err
	}
	return d.check(online, m.standing(), peers)
}

// vipFailedHoldBack keeps a node whose last tenure could not hold its VIP
// out of the election while another leads and a third could take over
// (ready, not stepped down, not failed likewise): when the leader hands
// over, that one takes the lease, not this node, which leads only when
// nobody else can. With nobody leading, the deference (its priority is
// 0) holds it back, for a bounded time, for a ready peer.
func (m *member) vipFailedHoldBack(peers []Standing) error {
	failed := m.vips.failed()
	if failed == nil || !anyLeading(peers) {
		return nil
	}
	for _, p := range peers {
		if !p.Leading && p.Ready && !p.Yielding && !p.VIPFailed {
			return fmt.Errorf("%w: %s can take over from the leader, and this node's last tenure could not hold its VIP: %w", errHoldingBack, p.Node, failed)
		}
	}
	return nil
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
