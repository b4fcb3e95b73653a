package engine

import (
	"github.com/ozanturksever/go-cluster/internal/fenced"
	"github.com/ozanturksever/go-cluster/internal/store"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// Fenced is the node's fenced state (internal/fenced): writes checked on
// this engine's tenure, reads of its bucket.
func (e *Engine) Fenced() *fenced.State {
	return &fenced.State{Node: fencedNode{e}, NodeID: e.p.NodeID, Timeout: e.p.RequestTimeout}
}

// fencedNode is the engine as the fenced state reaches it.
type fencedNode struct{ e *Engine }

// Store is the started node's bucket, or why there is none.
func (n fencedNode) Store() (*store.Store, error) {
	n.e.mu.Lock()
	defer n.e.mu.Unlock()
	switch {
	case !n.e.started:
		return nil, wire.ErrNotStarted
	case n.e.stopped:
		return nil, wire.ErrStopped
	case n.e.d == nil:
		return nil, wire.ErrNotStarted // Start in progress
	}
	return n.e.d.Store(), nil
}

// Tenure is the live tenure's epoch and latest lease revision.
func (n fencedNode) Tenure() (int64, uint64, bool) {
	if t := n.e.Tenure(); t != nil {
		return t.Epoch, t.Rev, true
	}
	return 0, 0, false
}

// RenewalInFlight is closed when the renewal in flight ends; nil if none.
func (n fencedNode) RenewalInFlight() <-chan struct{} { return n.e.view.RenewalInFlight() }

// stateWriteMetrics is the optional part of Metrics for fenced writes.
type stateWriteMetrics interface{ ObserveStateWrite(outcome string) }

// ObserveWrite tells the metrics, if they take it, how a write ended.
func (n fencedNode) ObserveWrite(outcome string) {
	if m, ok := n.e.cfg.Metrics.(stateWriteMetrics); ok {
		m.ObserveStateWrite(outcome)
	}
}
