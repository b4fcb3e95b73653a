package cluster

import (
	"context"
	"sync"
	"time"
)

// view is what the public query methods read: a snapshot the election loop
// publishes, plus the live tenure whose deadline the renewals extend.
type view struct {
	mu      sync.RWMutex
	leader  string
	epoch   int64
	lease   Lease
	hasRec  bool
	changed chan struct{} // closed and replaced whenever leader changes
	ready   error         // nil when the node may campaign as far as ReadinessCheck goes
	// metadata is this node's own, as Config.Metadata or SetMetadata last
	// set it: what it publishes while it leads.
	metadata map[string]string

	// The current tenure, nil when not leading. deadline is on this
	// process's monotonic clock; the tenure ends when it passes even if the
	// timer that cancels ctx has not run yet.
	tenureCtx   context.Context
	tenureEpoch int64
	tenureRev   uint64 // revision of the tenure's latest lease record
	deadline    time.Time
	// renewing is closed when the renewal in flight ends; nil when none is.
	renewing chan struct{}
}

func newView() *view { return &view{changed: make(chan struct{})} }

// leading reports whether a tenure is live right now.
func (v *view) leading(now time.Time) bool {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.leadingLocked(now)
}

func (v *view) leadingLocked(now time.Time) bool {
	return v.tenureCtx != nil && v.tenureCtx.Err() == nil && now.Before(v.deadline)
}

// waitLeader blocks until a leader is known or ctx ends.
func (v *view) waitLeader(ctx context.Context, stopped <-chan struct{}) (string, error) {
	for {
		v.mu.RLock()
		leader, changed := v.leader, v.changed
		v.mu.RUnlock()
		if leader != "" {
			return leader, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return "", ctx.Err()
		case <-stopped:
			return "", ErrStopped
		}
	}
}

// tenure returns the live tenure's epoch and the revision of its latest
// lease record, and false when this node does not lead at now. Fenced
// state writes send that revision as their precondition on the lease.
func (v *view) tenure(now time.Time) (epoch int64, rev uint64, ok bool) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	if !v.leadingLocked(now) {
		return 0, 0, false
	}
	return v.tenureEpoch, v.tenureRev, true
}

// renewalStarted marks a renewal in flight. A replicated stream refuses a
// write checked on the lease subject while another such write is in flight,
// so fenced state writes hold back until it ends (renewalInFlight): a
// leader busy writing state must not starve its own renewals.
func (v *view) renewalStarted() {
	v.mu.Lock()
	v.renewing = make(chan struct{})
	v.mu.Unlock()
}

// renewalEnded releases the state writes held back by renewalStarted.
func (v *view) renewalEnded() {
	v.mu.Lock()
	if v.renewing != nil {
		close(v.renewing)
		v.renewing = nil
	}
	v.mu.Unlock()
}

// renewalInFlight returns a channel closed when the renewal in flight ends,
// or nil when there is none.
func (v *view) renewalInFlight() <-chan struct{} {
	v.mu.RLock()
	defer v.mu.RUnlock()
	if v.renewing == nil {
		return nil
	}
	return v.renewing
}
