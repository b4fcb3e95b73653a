package driver

import (
	"context"
	"maps"
	"sync"
	"time"

	"github.com/ozanturksever/go-cluster/internal/election"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// View is what the node's queries read: a snapshot the loop publishes,
// plus the live tenure whose deadline the renewals extend. Its lock is its
// own: only its methods take it, none across I/O or a hook.
type View struct {
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
	clock    *clock
}

// NewView is the view of node nodeID before it starts: its metadata, and
// ready (nil, or why it may not lead yet).
func NewView(nodeID string, metadata map[string]string, ready error) *View {
	return &View{nodeID: nodeID, changed: make(chan struct{}), metadata: metadata, ready: ready, clock: newClock()}
}

// Now is the time the node decides by: its monotonic clock, moved on by a
// suspension of the host as well (clock).
func (v *View) Now() time.Time { return v.clock.now() }

// Suspend moves the node's clock on by d, its monotonic clock and timers
// left as they are: what a suspension of the host for d does (tests).
func (v *View) Suspend(d time.Duration) { v.clock.suspended.Add(int64(d)) }

// Snapshot is one consistent read of the view.
type Snapshot struct {
	Leader   string            // the leader known, "" for none
	Epoch    int64             // the live tenure's, else the last record's
	Lease    wire.Lease        // the last valid lease record seen
	HasRec   bool              // whether Lease is one
	Ready    error             // nil, or why the node may not lead
	Metadata map[string]string // this node's own (a copy)
	// Synced: the watch showed the key's current value: a campaign
	// waits for it.
	Synced bool
}

// Snapshot reads the view at once.
func (v *View) Snapshot() Snapshot {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return Snapshot{Leader: v.leader, Epoch: v.epoch, Lease: v.lease, HasRec: v.hasRec, Ready: v.ready, Metadata: maps.Clone(v.metadata), Synced: v.synced}
}

// Tenure is this node's live tenure, read at once: its ctx (the one
// OnBecomeLeader got), epoch and deadline.
type Tenure struct {
	Ctx      context.Context
	Epoch    int64
	Deadline time.Time
}

// Tenure returns the live tenure at now, and false when this node does
// not lead.
func (v *View) Tenure(now time.Time) (Tenure, bool) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	if !v.leadingLocked(now) {
		return Tenure{}, false
	}
	return Tenure{Ctx: v.tenureCtx, Epoch: v.tenureEpoch, Deadline: v.deadline}, true
}

// Leading reports whether a tenure is live at now.
func (v *View) Leading(now time.Time) bool {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.leadingLocked(now)
}

func (v *View) leadingLocked(now time.Time) bool {
	return v.tenureCtx != nil && v.tenureCtx.Err() == nil && now.Before(v.deadline)
}

// SetMetadata records the metadata the node publishes from now on.
func (v *View) SetMetadata(md map[string]string) {
	v.mu.Lock()
	v.metadata = md
	v.mu.Unlock()
}

// WaitLeader blocks until a leader is known, ctx ends or stopped closes
// (wire.ErrStopped).
func (v *View) WaitLeader(ctx context.Context, stopped <-chan struct{}) (string, error) {
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

// Fence returns the live tenure's epoch and the revision of its latest
// lease record, and false when this node does not lead at now. Fenced
// state writes send that revision as their precondition on the lease.
func (v *View) Fence(now time.Time) (epoch int64, rev uint64, ok bool) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	if !v.leadingLocked(now) {
		return 0, 0, false
	}
	return v.tenureEpoch, v.tenureRev, true
}

// renewalStarted marks a renewal in flight. A replicated stream refuses a
// write checked on the lease subject while another such write is in flight,
// so fenced state writes hold back until it ends (RenewalInFlight): a
// leader busy writing state must not starve its own renewals.
func (v *View) renewalStarted() {
	v.mu.Lock()
	v.renewing = make(chan struct{})
	v.mu.Unlock()
}

// renewalEnded releases the state writes held back by renewalStarted.
func (v *View) renewalEnded() {
	v.mu.Lock()
	if v.renewing != nil {
		close(v.renewing)
		v.renewing = nil
	}
	v.mu.Unlock()
}

// RenewalInFlight returns a channel closed when the renewal in flight
// ends, or nil when there is none.
func (v *View) RenewalInFlight() <-chan struct{} {
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
func (v *View) begin(ctx context.Context, epoch int64, rev uint64, deadline time.Time) {
	v.mu.Lock()
	v.tenureCtx, v.tenureEpoch, v.tenureRev = ctx, epoch, rev
	v.deadline = deadline
	v.leader = v.nodeID
	v.mu.Unlock()
}

// extend moves the deadline of the tenure at epoch.
func (v *View) extend(epoch int64, deadline time.Time) {
	v.mu.Lock()
	if v.tenureCtx != nil && v.tenureEpoch == epoch {
		v.deadline = deadline
	}
	v.mu.Unlock()
}

// expire ends the tenure whose ctx is ctx if its deadline has passed,
// cancelling it with cancel; otherwise it returns how long is left. ok is
// false when ctx is not the live tenure's any more.
func (v *View) expire(ctx context.Context, cancel context.CancelFunc) (left time.Duration, ok bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.tenureCtx != ctx {
		return 0, false
	}
	if wait := v.deadline.Sub(v.clock.now()); wait > 0 {
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
// change that follows says who (ExampleNode_Observe).
func (v *View) end(cancel context.CancelFunc) {
	v.mu.Lock()
	cancel()
	v.tenureCtx = nil
	if v.leader == v.nodeID {
		v.leader = ""
	}
	v.mu.Unlock()
}

// setLeader records a new known leader and wakes WaitLeader.
func (v *View) setLeader(leader string) {
	v.mu.Lock()
	v.leader = leader
	close(v.changed)
	v.changed = make(chan struct{})
	v.mu.Unlock()
}

// setReady records what Node.Ready reports.
func (v *View) setReady(err error) {
	v.mu.Lock()
	v.ready = err
	v.mu.Unlock()
}

// publish copies the machine's state s.
func (v *View) publish(s election.View) {
	v.mu.Lock()
	v.epoch = s.Epoch
	v.lease, v.hasRec = s.Lease, s.Lease.Epoch != 0 // a record's epoch is at least 1
	v.synced = s.Synced
	if s.Tenure && v.tenureCtx != nil && v.tenureEpoch == s.Epoch {
		v.tenureRev = s.Rev // the deadline moves with Extend only
	}
	v.mu.Unlock()
}
