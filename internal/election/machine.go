package election

import (
	"errors"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"time"
)

// Machine is the election of one node (see the package documentation).
type Machine struct {
	cfg      Params
	campaign bool // false for an observer
	// knobs are set by the simulator only (NewWithKnobs): the zero value
	// is the protocol.
	knobs  Knobs
	rnd    *rand.Rand // jitter of backoffs; seeded by the driver
	bucket BucketFacts
	// instance names this process in the held records it writes
	// (Params.Instance, rule 48).
	instance string
	// foreignSelf counts revisions of held records that name this NodeID
	// with another instance, seen after the first entry: a live process
	// with this node's NodeID (rule 48).
	foreignSelf int
	foreignRev  uint64 // the highest revision counted in foreignSelf

	// epochBase is the bucket's creation time in microseconds, less one:
	// every epoch led in the bucket is above it (rule 50). Zero when the
	// server did not say.
	epochBase int64

	lv    leaseView      // the lease as seen
	conn  connState      // the connection as the driver reports it
	own   ownTenure      // this node's tenure and the writes that may start one
	tim   campaignTiming // retries, races lost, resyncs
	hand  handover       // drain, cooldown, stop
	ready readiness      // ReadinessCheck results
	gone  bucketGone     // the bucket found deleted (gone.go)

	req      *Request     // the request out, nil when none
	checks   []Validation // ValidateLeadership calls waiting for a renewal
	deferred []Event      // events kept while a request is out
	answered int          // answers followed up since a kept event was last handled
	nextID   uint64

	known    string // leader last reported through LeaderChange
	err      error  // permanent failure
	finished bool
	shutDown bool
	out      []Action
}

// Knobs turn off one rule each, for the simulator's negative controls
// (internal/sim), or try a fix for a gap the simulator found in main's
// rules (docs/sim.md). Nothing but the simulator sets them: the zero
// value is the protocol as main has it.
type Knobs struct {
	// ShortTTLForNonRecords reintroduces bug 1 (§9 rule 1): wait only the
	// TTL of what the key holds now (0 for garbage, markers and absent
	// keys), not the longest TTL the key has carried.
	ShortTTLForNonRecords bool
	// FloorWithoutRevision undoes rule 31: taking over a floor record
	// counts from its writer's memory only, not from its revision.
	FloorWithoutRevision bool
	// NoEpochBase undoes rule 50: a bucket's epochs start at 1, not at
	// its creation time.
	NoEpochBase bool
	// The fix under evaluation for gap A of docs/sim.md (gaps B, C, D and
	// E are closed by rules 36-38 and 43).
	//
	// RevisionFloorAlways: every takeover but a handed-back release counts
	// from the key's revision (gap A: a forged low held record taken over
	// after the first sight, once the real epoch was compacted away).
	RevisionFloorAlways bool
}

// leaseView is the current view of the lease key.
type leaseView struct {
	watching bool      // a watch is running
	watchAt  time.Time // retry a failed watch at this time
	synced   bool      // the watch delivered the initial value
	cur      observed  // the latest lease entry seen
	// followedNew: the node moved to a bucket created again. Its
	// empty-bucket wait (rule 28) is not for this one: the age it knows
	// is the first bucket's, and a holder there may still be running.
	followedNew  bool
	observations int   // lease revisions seen since start
	maxEpoch     int64 // highest epoch seen in any record, or held
	maxTTL       time.Duration
	revFloor     uint64    // a stream sequence at least every revision of the bucket
	checkedSeq   uint64    // the bucket's last sequence at the last identity check (rule 35)
	probedRev    uint64    // the revision last read back (probeDue)
	probedAt     time.Time // when it was last read back
}

// connState is the connection as the driver last reported it.
type connState struct {
	connected   bool
	reconnects  uint64    // reported
	seen        uint64    // last taken into account (noteReconnect)
	stableSince time.Time // connected, synced and healthy since
	armedFor    time.Time // the timer as last armed (zero: none)
	resumedAt   time.Time // an event came over RenewInterval after armedFor: the loop was held (rule 57)
	askedAt     time.Time // last priority request sent
}

// ownTenure is this node's tenure, and what is known of its own writes.
type ownTenure struct {
	t         *Tenure
	lastEpoch int64           // epoch of this node's last tenure
	pending   *pendingAcquire // an acquire whose outcome is unknown
	// blind is the epoch of a record of this node that landed after
	// writes it did not see (rule 35): never led, never released, and
	// covered by a floor record.
	blind int64
}

// Tenure is this node holding the lease.
type Tenure struct {
	epoch      int64
	rev        uint64
	acquiredAt time.Time // send time of the acquiring write
	lastSent   time.Time // send time of the last write that succeeded
	deadline   time.Time // lastSent + LeaseTTL - SafetyMargin
	renewDue   time.Time
	failures   int
	// cancelled: the deadline passed (Lose queued); ended: the tenure
	// was ended by a decision (lost, or draining).
	cancelled  bool
	ended      bool
	loseQueued bool
}

// campaignTiming is when the follower may write next.
type campaignTiming struct {
	waiting   bool      // our CAS lost: wait for a revision above waitAbove
	waitAbove uint64    // the revision we lost at
	resyncAt  time.Time // read the key if the watch shows nothing newer by then
	retryAt   time.Time // backoff after a transient error while campaigning
	failures  int       // consecutive transient failures while campaigning
	coldSaid  bool      // the cold start's wait has been logged
}

// handover is a step-down in progress and what follows it.
type handover struct {
	drain         *Drain
	cooldownUntil time.Time
	stopReq       bool
	stopToken     uint64
}

// Drain is a StepDown or Stop in progress on the leader.
type Drain struct {
	hookStarted bool
	hookDone    bool
	deadline    time.Time // DrainTimeout after OnLoseLeadership began
	stepDown    bool
	next        string
	reply       func(error) Action // the answer when released; nil for none
}

// New makes the machine of a node with cfg (defaults applied),
// after it opened the bucket. A watch is running, not yet synced.
func New(cfg Params, bucket BucketFacts, seed uint64) *Machine {
	m := &Machine{cfg: cfg, campaign: !cfg.Observer, bucket: bucket,
		rnd:      rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		instance: cfg.Instance}
	if m.instance == "" {
		m.instance = strconv.FormatUint(seed, 36)
	}
	m.lv.watching = true
	m.lv.revFloor = bucket.LastSeqAtOpen
	m.epochBase = epochBase(bucket.Created)
	m.conn.connected = true
	// The count so far is not a reconnect this node has to account for.
	m.conn.reconnects, m.conn.seen = bucket.Reconnects, bucket.Reconnects
	return m
}

// NewWithKnobs is New with rules turned off or fixes tried: for the
// simulator's negative controls and fixes under evaluation only.
func NewWithKnobs(cfg Params, bucket BucketFacts, seed uint64, k Knobs) *Machine {
	m := New(cfg, bucket, seed)
	m.knobs = k
	return m
}

// Handle takes one event at now and returns what to do.
func (m *Machine) Handle(now time.Time, ev Event) []Action {
	m.out = nil
	if m.shutDown {
		return nil
	}
	m.noteHold(now)
	m.deadlineTimer(now)
	var next time.Time
	switch e := ev.(type) {
	case Tick:
		next = m.act(now)
	case Result:
		m.onResult(now, e)
		m.answered++
		// The decision the request was part of goes on; but after a few
		// answers in a row with events kept, the kept events come first
		// (run): a node whose every decision asks again (a read-back that
		// times out, on and on) must still hear Stop.
		if len(m.deferred) == 0 || m.answered < maxAnswersFirst {
			next = m.act(now)
		}
	case Conn:
		// The connection's state is a fact, not a request: known at once,
		// so that a node cut off stops reading back what it cannot see.
		m.keepMissedAdvisory(e)
		m.conn.connected, m.conn.reconnects = e.Connected, e.Reconnects
		if m.req == nil {
			next = m.act(now)
		}
	default:
		m.deferred = append(m.deferred, ev)
	}
	next = m.run(now, next)
	if m.finished {
		m.shutdown()
		return m.out
	}
	m.arm(now, next)
	return m.out
}

// maxAnswersFirst is how many answers in a row the machine follows up
// before it handles the events kept meanwhile.
const maxAnswersFirst = 8

// run handles the kept events, each followed by the decisions it makes
// due, until a request is out, and returns when to look again (next if
// there was nothing to handle).
func (m *Machine) run(now, next time.Time) time.Time {
	for m.req == nil && !m.finished && len(m.deferred) > 0 {
		ev := m.deferred[0]
		m.deferred = m.deferred[1:]
		m.answered = 0
		m.apply(now, ev)
		next = m.act(now)
	}
	return next
}

// apply handles an event that is not a result.
func (m *Machine) apply(now time.Time, ev Event) {
	switch e := ev.(type) {
	case Entry:
		m.observe(now, e.KV)
	case Synced:
		m.lv.synced = true
		if !m.lv.cur.present {
			m.waitFrom(now) // the key is absent: since now, as far as we know
		}
	case WatchClosed:
		m.restartWatch(now)
	case BucketCreated:
		m.onBucketAdvisory(now)
	default:
		m.applyCommand(now, ev)
	}
}

// applyCommand handles the events of the API, the dispatcher and control
// requests.
func (m *Machine) applyCommand(now time.Time, ev Event) {
	switch e := ev.(type) {
	case Health:
		m.onHealth(now, e.Err)
	case LoseStarted:
		if d := m.hand.drain; d != nil && !d.hookStarted {
			d.hookStarted, d.deadline = true, now.Add(m.cfg.DrainTimeout)
		}
	case LoseDone:
		if d := m.hand.drain; d != nil {
			d.hookStarted, d.hookDone = true, true
		}
	case StepDown:
		m.onStepDown(now, e)
	case Stop:
		m.onStop(now, e)
	case Validate:
		m.onValidate(now, e)
	case SetMetadata:
		m.onSetMetadata(now, e)
	case Control:
		m.onControl(now, e)
	}
}

// act does what is due now and returns when to look again.
func (m *Machine) act(now time.Time) time.Time {
	for i := 0; ; i++ {
		if m.finished || m.req != nil {
			return time.Time{}
		}
		next, again := m.step(now)
		m.publish()
		if !again || i > 8 {
			return next
		}
	}
}

// step makes one decision; again says another may be due at once.
func (m *Machine) step(now time.Time) (next time.Time, again bool) {
	if !m.lv.watching && !m.lv.watchAt.IsZero() {
		if !now.Before(m.lv.watchAt) {
			m.restartWatch(now)
			return time.Time{}, true
		}
		defer func() { next = earliest(next, m.lv.watchAt) }()
	}
	if m.own.t != nil {
		return m.stepHolding(now)
	}
	if m.hand.drain != nil {
		m.finishDrain(now, nil)
		return time.Time{}, true
	}
	if m.hand.stopReq {
		m.finished = true
		return time.Time{}, false
	}
	if !m.gone.since.IsZero() {
		return m.stepBucketGone(now)
	}
	return m.stepFollowing(now)
}

// deadlineTimer ends the tenure once its deadline has passed, even while
// a request is out (the driver's timer does the same, whichever is first).
func (m *Machine) deadlineTimer(now time.Time) {
	t := m.own.t
	if t == nil || t.ended || t.cancelled || now.Before(t.deadline) {
		return
	}
	t.cancelled = true
	m.queueLose(t, m.expiredCause(now, t))
}

// arm asks for a tick at the earliest of next and the live deadline.
func (m *Machine) arm(now time.Time, next time.Time) {
	if t := m.own.t; t != nil && !t.ended && !t.cancelled {
		next = earliest(next, t.deadline)
	}
	if !next.IsZero() && next.Before(now) {
		next = now
	}
	m.conn.armedFor = next
	m.emit(Arm{At: next})
}

// noteHold notes an event that came more than RenewInterval after the
// timer was due: the loop was held (a paused process, a stalled VM), and
// what the watch delivers now may have waited in a buffer (rule 57).
func (m *Machine) noteHold(now time.Time) {
	if !m.conn.armedFor.IsZero() && now.Sub(m.conn.armedFor) > m.cfg.RenewInterval {
		m.conn.resumedAt = now
	}
}

func (m *Machine) emit(a Action) { m.out = append(m.out, a) }

// logf emits a line for the node's log.
func (m *Machine) logf(level slog.Level, msg string, args ...any) {
	m.emit(Log{Level: level, Msg: msg, Args: args})
}

// leading reports whether a tenure is live at now.
func (m *Machine) leading(now time.Time) bool {
	t := m.own.t
	return t != nil && !t.ended && !t.cancelled && now.Before(t.deadline)
}

// knownLeader is the leader as this node sees it now.
func (m *Machine) knownLeader() string {
	if t := m.own.t; t != nil && !t.ended && !t.cancelled {
		return m.cfg.NodeID
	}
	c := m.lv.cur
	if !c.valid || c.expired || m.mine(c.lease) {
		return ""
	}
	return c.lease.NodeID
}

// publish reports a change of the known leader.
func (m *Machine) publish() {
	if leader := m.knownLeader(); leader != m.known {
		m.known = leader
		m.emit(LeaderChange{Leader: leader})
	}
}

// fail stops the election for good after a permanent error; a deleted
// bucket is waited for instead, for as long as the node runs
// (gone.go, rule 29).
func (m *Machine) fail(now time.Time, err error) {
	if errors.Is(err, ErrBucketDeleted) {
		m.bucketDeleted(now, err)
		return
	}
	m.failNow(now, err)
}

// failNow stops the node with a permanent error.
func (m *Machine) failNow(now time.Time, err error) {
	m.err = err
	m.emit(Fail{Err: err})
	if m.own.t != nil {
		m.endTenure(err)
		m.own.t = nil
	}
	if m.hand.drain != nil {
		m.finishDrain(now, err)
	}
	m.finished = true
}

// shutdown is the machine's end: the tenure ends, a step-down in progress
// ends with ErrStopped, Stop is answered.
func (m *Machine) shutdown() {
	m.shutDown = true
	if m.own.t != nil {
		m.endTenure(ErrStopped)
		m.own.t = nil
	}
	if d := m.hand.drain; d != nil && d.reply != nil {
		m.hand.drain = nil
		m.emit(d.reply(ErrStopped))
	}
	if m.hand.stopReq {
		m.emit(Reply{Token: m.hand.stopToken})
	}
	m.answerKept()
	m.publish()
	m.emit(Finished{})
}

// answerKept answers every call kept behind a request out when the
// machine stops (issue 25): each caller hears ErrStopped from the
// machine, not only by watching the loop's exit.
func (m *Machine) answerKept() {
	kept := m.deferred
	m.deferred = nil
	for _, ev := range kept {
		switch e := ev.(type) {
		case StepDown:
			m.emit(Reply{Token: e.Token, Err: ErrStopped})
		case Validate:
			m.emit(Reply{Token: e.Token, Err: ErrStopped})
		case SetMetadata:
			m.emit(Reply{Token: e.Token, Err: ErrStopped})
		case Stop:
			m.emit(Reply{Token: e.Token})
		case Control:
			m.emit(Reply{Token: e.Token, Control: true, Answer: StepDownReply{Node: m.cfg.NodeID, Error: ErrStopped.Error()}})
		}
	}
}

// StopNow ends the machine at once, with a request out or not: the Node's
// teardown has given up waiting for a graceful end.
func (m *Machine) StopNow() []Action {
	m.out = nil
	if !m.shutDown {
		m.shutdown()
	}
	return m.out
}

// backoff is capped exponential backoff with full jitter over its upper
// half, as backoff is, on the machine's own random source.
func (m *Machine) backoff(attempt int, base, limit time.Duration) time.Duration {
	d := base << min(attempt-1, 16)
	if d <= 0 || d > limit {
		d = limit
	}
	return d/2 + time.Duration(m.rnd.Int64N(int64(d/2)+1))
}
