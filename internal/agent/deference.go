package agent

// Deference: a node of lower priority holds back from an election nobody
// leads while a peer of higher priority is live and ready to lead, so
// that the preferred host wins the first election (of a new bucket, after
// a NATS outage, after a crash) instead of taking the lease over a
// lease_ttl later (issue 33, defect 5). The election itself is the
// library's: holding back is reported as not ready, which keeps the
// node's election from campaigning, for a bounded time.

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// errHoldingBack is wrapped by the readiness error of a node that leaves
// the election to a peer.
var errHoldingBack = errors.New("holding back from the election")

// deference decides, at each readiness poll, whether the node holds back.
// It waits for one peer at most budget (1.5 lease_ttl) from when it first
// saw it ready while nobody led: a peer that is live but cannot win (its
// bucket permissions, a bug) delays the election by about a lease_ttl,
// never for ever. A peer that stops announcing is dead to it after
// lease_ttl/2, before its lease can expire.
type deference struct {
	budget time.Duration
	log    *slog.Logger

	mu      sync.Mutex
	since   map[string]time.Time // peers seen ready to lead while nobody leads, since when
	holding string               // the peer it holds back for now, for the log
}

func newDeference(leaseTTL time.Duration, log *slog.Logger) *deference {
	return &deference{budget: leaseTTL + leaseTTL/2, log: log, since: map[string]time.Time{}}
}

// check returns why self holds back at now (online time: the wait for a
// peer does not run while this node is cut off), given its live peers'
// last standings; nil when it may campaign.
func (d *deference) check(now time.Time, self Standing, peers []Standing) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if self.Leading || anyLeading(peers) {
		clear(d.since)
		d.say("")
		return nil
	}
	var best *Standing
	seen := map[string]bool{}
	for i, p := range peers {
		if !p.Ready || p.Yielding || p.Priority <= self.Priority {
			continue
		}
		seen[p.Node] = true
		first, ok := d.since[p.Node]
		if !ok {
			first = now
			d.since[p.Node] = now
		}
		if now.Sub(first) < d.budget && (best == nil || p.Priority > best.Priority) {
			best = &peers[i]
		}
	}
	for node := range d.since {
		if !seen[node] {
			delete(d.since, node)
		}
	}
	if best == nil {
		d.say("")
		return nil
	}
	d.say(best.Node, "peer_priority", best.Priority, "priority", self.Priority)
	return fmt.Errorf("%w: %s, of priority %d (this node's is %d), is ready and nobody leads", errHoldingBack, best.Node, best.Priority, self.Priority)
}

// say logs a change of the peer held back for, once.
func (d *deference) say(peer string, args ...any) {
	switch {
	case peer == d.holding:
	case peer == "":
		d.log.Info("no longer holding back from the election", "for", d.holding)
	default:
		d.log.Info("holding back from the election: a node of higher priority is ready and nobody leads", append([]any{"for", peer}, args...)...)
	}
	d.holding = peer
}

func anyLeading(peers []Standing) bool {
	for _, p := range peers {
		if p.Leading {
			return true
		}
	}
	return false
}
