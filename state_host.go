package cluster

import (
	"time"

	"github.com/ozanturksever/go-cluster/internal/store"
)

// stateHost is all State reaches of its node: the bucket once the node
// has started, and the node's tenure as its view records it. *Node
// implements it, so that State depends on neither the node's lock nor its
// lifecycle fields.
type stateHost interface {
	// stateStore is the started node's bucket, or why there is none
	// (ErrNotStarted, ErrStopped).
	stateStore() (*store.Store, error)
	// tenure is the epoch and latest lease revision of this node's live
	// tenure at now; ok is false when the node does not lead (docs/design.md §3.3).
	tenure(now time.Time) (epoch int64, rev uint64, ok bool)
	// renewalInFlight is closed when the renewal in flight ends, nil when
	// none is: fenced writes let renewals go first.
	renewalInFlight() <-chan struct{}
}

func (n *Node) stateStore() (*store.Store, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch {
	case !n.started:
		return nil, ErrNotStarted
	case n.stopped:
		return nil, ErrStopped
	case n.el == nil:
		return nil, ErrNotStarted // Start in progress
	}
	return n.el.store, nil
}

func (n *Node) tenure(now time.Time) (int64, uint64, bool) { return n.view.tenure(now) }

func (n *Node) renewalInFlight() <-chan struct{} { return n.view.renewalInFlight() }
