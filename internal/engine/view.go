package engine

import (
	"context"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ozanturksever/go-cluster/internal/election"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// nodeView is what the node's queries read: a snapshot the loop publishes,
// plus the live tenure whose deadline the renewals extend. Its lock is its
// own: only its methods take it, none across I/O or a hook.
type nodeView struct {
	nodeID string
	mu     sync.RWMutex
	leader string
	epoch  int64
	lease  wire.Lease
	hasRec bool
	// synced: the machine's watch showed the key's current value
	// (election.View.Synced).
	synced  bool
	changed chan struct{} // closed and replaced whenever leader changes
	ready   error         // nil when the node may campaign as far as ReadinessCheck goes
	// metadata is this node's own, as driverConfig.Metadata or SetMetadata last
	// set it: what it publishes while it leads.
	metadata map[string]string

	// tenure is the live tenure, nil when not leading: a new value for
	// every change, so that a reader gets all of its fields at once.
	tenure atomic.Pointer[Tenure]
	// renewing is closed when the renewal in flight ends; nil when none is.
	renewing chan struct{}
	clock    *clock
}

// newNodeView is the view of node nodeID before it starts: its metadata, and
// ready (nil, or why it may not lead yet).
func newNodeView(nodeID string, metadata map[string]string, ready error) *nodeView {
	return &nodeView{nodeID: nodeID, changed: make(chan struct{}), metadata: metadata, ready: ready, clock: newClock()}
}

// Now is the time the node decides by: its monotonic clock, moved on by a
// suspension of the host as well (clock).
func (v *nodeView) Now() time.Time { return v.clock.now() }

// snapshot reads the view at once.
func (v *nodeView) snapshot() Snapshot {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return Snapshot{Leader: v.leader, Epoch: v.epoch, Lease: v.lease, HasRec: v.hasRec, Ready: v.ready, Metadata: maps.Clone(v.metadata), Synced: v.synced}
}

// Tenure is this node's tenure as every query reads it (IsLeader, Tenure,
// Epoch, fenced writes, liveness, status replies). A value never changes:
// the driver publishes a new one when the tenure begins, when a renewal is
// acknowledged or moves its revision, and none when it ends. Times are on
// the node's clock (nodeView.Now).
type Tenure struct {
	Ctx   context.Context // the one OnBecomeLeader got: cancelled when the tenure ends
	Epoch int64
	Rev   uint64        // revision of its latest lease record: fenced writes are checked on it
	TTL   time.Duration // the lease TTL it runs on: the bucket's
	Renew time.Duration // its renewal interval: a renewal is due this long after Sent
	// Sent is the send time of its latest acknowledged write (the
	// acquisition or a renewal); Deadline is Sent + TTL - the margin (P8).
	Sent, Deadline time.Time
}

// live reports whether t is a tenure live at now: its ctx not cancelled,
// its deadline not passed. A nil t is not.
func (t *Tenure) live(now time.Time) bool {
	return t != nil && t.Ctx.Err() == nil && now.Before(t.Deadline)
}

// Tenure returns the tenure live at now, or nil when this node does not
// lead. The value is shared: never change it.
func (v *nodeView) Tenure(now time.Time) *Tenure {
	if t := v.tenure.Load(); t.live(now) {
		return t
	}
	return nil
}

// SetMetadata records the metadata the node publishes from now on.
func (v *nodeView) SetMetadata(md map[string]string) {
	v.mu.Lock()
	v.metadata = md
	v.mu.Unlock()
}

// WaitLeader blocks until a leader is known, ctx ends or stopped closes
// (wire.ErrStopped).
func (v *nodeView) WaitLeader(ctx context.Context, stopped <-chan struct{}) (string, error) {
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
			return "", wire.ErrStopped
		}
	}
}

// renewalStarted marks a renewal in flight. A replicated stream refuses a
// write checked on the lease subject while another such write is in flight,
// so fenced state writes hold back until it ends (RenewalInFlight): a
// leader busy writing state must not starve its own renewals.
func (v *nodeView) renewalStarted() {
	v.mu.Lock()
	v.renewing = make(chan struct{})
	v.mu.Unlock()
}

// renewalEnded releases the state writes held back by renewalStarted.
func (v *nodeView) renewalEnded() {
	v.mu.Lock()
	if v.renewing != nil {
		close(v.renewing)
		v.renewing = nil
	}
	v.mu.Unlock()
}

// RenewalInFlight returns a channel closed when the renewal in flight
// ends, or nil when there is none.
func (v *nodeView) RenewalInFlight() <-chan struct{} {
	v.mu.RLock()
	defer v.mu.RUnlock()
	if v.renewing == nil {
		return nil
	}
	return v.renewing
}

// The driver's writes: the tenure it starts, extends and ends, the leader
// it learns, and the machine's state after each event.

// begin records the tenure won, with this node as leader: OnBecomeLeader
// may run before the leader change that follows in the same batch is
// carried out (it was seen reading "" under load in ExampleNode_StepDown).
func (v *nodeView) begin(t *Tenure) {
	v.mu.Lock()
	v.tenure.Store(t)
	v.leader = v.nodeID
	v.mu.Unlock()
}

// update publishes a copy of the tenure at epoch changed by change, if it
// is the one published.
func (v *nodeView) update(epoch int64, change func(*Tenure)) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if t := v.tenure.Load(); t != nil && t.Epoch == epoch {
		next := *t
		change(&next)
		v.tenure.Store(&next)
	}
}

// expire ends the tenure whose ctx is ctx if its deadline has passed,
// cancelling it with cancel; otherwise it returns how long is left. ok is
// false when ctx is not the live tenure's any more.
func (v *nodeView) expire(ctx context.Context, cancel context.CancelFunc) (left time.Duration, ok bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	t := v.tenure.Load()
	if t == nil || t.Ctx != ctx {
		return 0, false
	}
	if wait := t.Deadline.Sub(v.clock.now()); wait > 0 {
		return wait, true
	}
	cancel()
	if v.leader == v.nodeID {
		v.leader = "" // as end does, before OnLoseLeadership can read it (E6)
	}
	return 0, true
}

// end cancels the live tenure with cancel and forgets it; the leader is
// not itself any more, before OnLoseLeadership can read it: the leader
// change that follows says who (ExampleNode_Events).
func (v *nodeView) end(cancel context.CancelFunc) {
	v.mu.Lock()
	cancel()
	v.tenure.Store(nil)
	if v.leader == v.nodeID {
		v.leader = ""
	}
	v.mu.Unlock()
}

// setLeader records a new known leader and wakes WaitLeader.
func (v *nodeView) setLeader(leader string) {
	v.mu.Lock()
	v.leader = leader
	close(v.changed)
	v.changed = make(chan struct{})
	v.mu.Unlock()
}

// setReady records what Node.Ready reports.
func (v *nodeView) setReady(err error) {
	v.mu.Lock()
	v.ready = err
	v.mu.Unlock()
}

// publish copies the machine's state s.
func (v *nodeView) publish(s election.View) {
	v.mu.Lock()
	v.epoch = s.Epoch
	v.lease, v.hasRec = s.Lease, s.Lease.Epoch != 0 // a record's epoch is at least 1
	v.synced = s.Synced
	v.mu.Unlock()
	if t := v.tenure.Load(); s.Tenure && t != nil && t.Rev != s.Rev {
		v.update(s.Epoch, func(t *Tenure) { t.Rev = s.Rev }) // the deadline moves with Extend only
	}
}
