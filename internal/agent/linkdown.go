package agent

// A VIP's interface going down (deleted, down, carrier lost) ends a
// tenure at once: the monitor hears it as a netlink link event, and the
// leader steps down then, not at the next readiness reading (up to
// ReadinessInterval later), so that the successor announces the VIP
// within milliseconds of the link going down (issue 41, item 2). The
// readiness reading still keeps the node out of elections while the
// interface stays unusable.

import (
	"context"
	"errors"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
)

// stepDownTimeout bounds a step-down asked for by a link event: the
// drain (the service's grace, the VIPs' release) and the release.
const stepDownTimeout = time.Minute

// vipUnusable is the VIPs' monitors' word that this host cannot hold a
// VIP now (reason says why): a fault, and, on the leader, the end of its
// tenure at once.
func (m *member) vipUnusable(reason string) {
	m.fault(reason)
	m.mu.Lock()
	node := m.node
	m.mu.Unlock()
	if node == nil || !node.IsLeader() {
		return
	}
	m.log.Warn("stepping down at once: this host cannot hold its VIP", "reason", reason)
	// Not on the monitor's goroutine: StepDown waits for the drain.
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), stepDownTimeout)
		defer cancel()
		err := node.StepDown(ctx)
		switch {
		case err == nil, errors.Is(err, cluster.ErrNotLeader), errors.Is(err, cluster.ErrStopped):
			// Done, or the readiness reading (or a stop) was first.
		default:
			m.log.Warn("step-down after the VIP's interface went down", "err", err)
		}
	}()
}
