package election

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/ozanturksever/go-cluster/internal/wire"
)

// State is what the machine is doing (§4.10), as Machine.State derives
// it: no field holds it, so no transition can leave it behind.
type State int

const (
	Syncing   State = iota // confirming the bucket, opening the watch, awaiting its current value
	Following              // watching; waiting out the value seen (P3-P6)
	Acquiring              // an acquisition's write is out
	Leading                // a tenure: renewals, each acknowledged (P7, P8)
	Draining               // a step-down ended the tenure; renewing until the release (P11)
	Stopped                // Stop, or a permanent error
)

func (s State) String() string {
	return [...]string{"syncing", "following", "acquiring", "leading", "draining", "stopped"}[s]
}

// State is what the machine is doing, from the request, tenure, drain, watch.
func (m *Machine) State() State {
	switch r := m.req; {
	case m.stopped:
		return Stopped
	case m.drain != nil:
		return Draining
	case m.t != nil:
		return Leading
	case r != nil && r.a != nil:
		return Acquiring
	case !m.caughtUp:
		return Syncing
	}
	return Following
}

// Machine is the election of one node (see the package documentation).
type Machine struct {
	p   Params
	rnd *rand.Rand
	// What the machine is doing (docs/design.md §4.10) is derived: the
	// request out, the tenure t, the drain, and these two.
	stopped  bool // Stop, or a permanent error
	caughtUp bool // the watch delivered its current value since Start or the last move (not syncing)

	inc       Incarnation // the incarnation followed, as last confirmed
	incKnown  bool
	watching  bool   // a watch is open (its Synced may still be due)
	synced    bool   // the watch delivered the key's current value
	cur       seen   // the key as seen
	seenRev   uint64 // the highest revision seen: a Confirm answering a lower last sequence is from a server behind (C4)
	ttlSeen   time.Duration
	membersAt time.Time // when the Confirm that read inc.MembersSpeak was answered (P16)
	unread    bool      // stepped down, no Confirm answered since: one before its next takeover (§4.4)

	conn    connState
	ready   bool     // ReadinessCheck lets this node campaign (P14)
	req     *request // the request out, nil when none
	kept    []Event  // events kept while a request is out
	nextID  uint64
	pending []*attempt // acquisitions at one epoch whose writes went unanswered: they may land
	lost    lostRace
	retryAt time.Time // backoff after a transient error while following
	fails   int

	t        *tenure
	drain    *drain
	cooldown time.Time // no campaign before (unless named successor)
	stopping bool      // Stop: done once the drain and the request out are
	known    string    // leader last reported
	wake     time.Time // the latest look planned: one later by a renewal period follows a pause (P13)
	out      []Action
}

// seen is the value of the key as this node sees it (P1, P3).
type seen struct {
	kind  Kind
	rev   uint64 // its revision (0 when absent)
	d     decoded
	first time.Time // when this node first saw it, on its clock (P3)
	// tenureOK: a Confirm after this tenure's first record was seen named
	// the incarnation followed (P7); handBack: a release of the tenure
	// whose record, so confirmed, the watch showed just before it (P5).
	tenureOK, handBack bool
	// When the last Confirm after first sight was answered (P4, P7, P15;
	// zero: none): the ceiling, and, absent, the last sequence.
	checked time.Time
	ceiling time.Duration
	lastSeq uint64
	age     time.Duration
}

type connState struct {
	connected   bool
	reconnects  uint64
	stableSince time.Time // connected, synced and ready since
	askedAt     time.Time // last priority request
}

// lostRace is a CAS lost at rev (P10): wait for a newer revision until resync.
type lostRace struct {
	waiting bool
	above   uint64
	resync  time.Time
}

// Knobs each remove one check: the simulator's negative controls only.
type Knobs struct {
	NoAck        bool // I3: an acquisition whose write went unanswered leads as if it had landed
	NoRangeCheck bool // I1: a record is any decoded record, whatever its epoch
	OwnTTL       bool // I2: a node's own LeaseTTL for its tenures and every wait, the bucket's ignored
	NoClusterTTL bool // I2: the cluster's ceiling ignored: a bucket created again is trusted for its TTL
	TrustBehind  bool // C4: a Confirm's answer is followed whatever incarnation or last sequence it names
	NoCheck      bool // P7: a value is taken over without a Confirm after its first sight
	SwitchEarly  bool // P16: a leader renews at its highest version whatever the members speak
}

// New makes the machine of a node; Start begins it.
func New(p Params, seed uint64) *Machine {
	if p.Instance == "" {
		p.Instance = strconv.FormatUint(seed, 36)
	}
	m := &Machine{p: p, rnd: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	m.conn.connected, m.ready = true, !p.ReadinessCheck
	return m
}

// Handle takes one event at now and returns what to do.
func (m *Machine) Handle(now time.Time, ev Event) []Action {
	m.out = nil
	if m.stopped && m.req == nil {
		return nil
	}
	m.seePause(now)
	if t := m.t; t != nil && !t.ended && !now.Before(t.deadline) { // whatever is out (P8)
		m.lose(now, fmt.Errorf("%w: no renewal confirmed before the deadline", wire.ErrLeaseExpired))
	}
	switch e := ev.(type) {
	case Start, Tick:
	case Conn:
		m.onConn(now, e)
	case LoseHook:
		m.onLoseHook(now, e)
	case answer:
		m.onAnswer(now, e)
	default:
		if m.req != nil {
			m.kept = append(m.kept, ev) // decided once the answer is in
			break
		}
		m.apply(now, ev)
	}
	m.step(now)
	return m.out
}

// apply handles an event that waits for no request.
func (m *Machine) apply(now time.Time, ev Event) {
	switch e := ev.(type) {
	case Entry:
		m.observe(now, e.KV)
	case Synced:
		m.onSynced(now)
	case WatchClosed:
		m.watching, m.synced = false, false
	case Readiness:
		m.onReadiness(now, e.Ready)
	case StepDown:
		m.onStepDown(now, e)
	case Stop:
		m.onStop(now)
	case Validate:
		m.onRenewNow(now)
	case SetMetadata:
		m.p.Metadata = e.Metadata
		m.onRenewNow(now)
	case Abort:
		m.fail(e.Err)
	case SetPriority:
		m.p.Priority = e.Priority // a leader's next renewal carries it
	}
}

// step makes every decision due now and arms the timer for the next.
func (m *Machine) step(now time.Time) {
	for m.req == nil && len(m.kept) > 0 {
		ev := m.kept[0]
		m.kept = m.kept[1:]
		m.apply(now, ev)
	}
	if m.stopping && m.req == nil && m.t == nil && !m.stopped {
		m.stop(nil, nil) // a requested Stop has nothing left to do
	}
	var next time.Time
	if m.req == nil && !m.stopped {
		next = m.decide(now)
	}
	if !next.After(now) {
		next = time.Time{} // due now means decided now: nothing to wake for
	}
	if m.t != nil && !m.t.ended {
		next = earliest(next, m.t.deadline)
	}
	if m.p.Priority > 0 { // a node that may preempt looks once a renewal period: a pause is seen (P13)
		next = earliest(next, now.Add(m.renewEvery(m.tenureTTL())))
	}
	if m.wake = next; !m.stopped {
		m.emit(Arm{At: next})
	}
}

// decide is the one place a request starts; it returns when to look again.
func (m *Machine) decide(now time.Time) time.Time {
	switch {
	case now.Before(m.retryAt) && (!m.incKnown || !m.watching):
		return m.retryAt
	case !m.incKnown:
		return m.send(now, Confirm{Timeout: m.p.RequestTimeout}, request{why: toOpen})
	case !m.watching:
		return m.send(now, Watch{Timeout: m.p.RequestTimeout}, request{})
	case m.t != nil: // leading or draining
		return m.lead(now)
	case !m.synced:
		return time.Time{}
	}
	return m.follow(now)
}

// stop ends the machine once, a live tenure with cause; err: why, nil for Stop.
func (m *Machine) stop(cause, err error) {
	if m.stopped { // a permanent error is reported once
		return
	}
	if m.t != nil && !m.t.ended {
		m.endTenure(cause)
	}
	m.stopped = true
	m.emit(Finished{Err: err})
}

// fail reports a permanent error and stops.
func (m *Machine) fail(err error) { m.stop(err, err) }

// StopNow ends the machine at once, without a release: the driver's
// teardown gave up waiting; it answers every call left with ErrStopped.
func (m *Machine) StopNow() []Action {
	m.out = nil
	m.stop(wire.ErrStopped, nil)
	return m.out
}

func (m *Machine) emit(a Action) { m.out = append(m.out, a) }

func (m *Machine) logf(level slog.Level, msg string, args ...any) {
	m.emit(Log{Level: level, Msg: msg, Args: args})
}

// earliest is the earliest non-zero time.
func earliest(times ...time.Time) time.Time {
	var out time.Time
	for _, t := range times {
		if !t.IsZero() && (out.IsZero() || t.Before(out)) {
			out = t
		}
	}
	return out
}

// request is the request out, and the decision its answer continues.
type request struct {
	id      uint64
	sent    time.Time
	purpose Purpose    // a Write's
	value   []byte     // a Write's
	a       *attempt   // the acquisition of a Write
	why     confirmWhy // a Confirm's
	seenRev uint64     // a Confirm's: the highest revision seen when it was sent
}

// confirmWhy says what a Confirm is for.
type confirmWhy int

const (
	toOpen  confirmWhy = iota // before a watch opens: the incarnation followed
	toWait                    // for an unknown value or an absent key: its ceiling (P4); half way through a held record's wait (P15)
	toWrite                   // before a takeover over an absent key or unknown value: what every member speaks (P16); after a step-down (§4.4)
)

// attempt is an acquisition: what it wrote, and when.
type attempt struct {
	epoch   int64
	version int    // the protocol of the record written (P16)
	value   []byte // the record written: its send time makes it this attempt's own
	ttl     time.Duration
	rev     uint64 // where it landed
	sent    time.Time
	cause   Cause
	seen    time.Time // when the node first saw the value it wrote over; zero for an absent key
}

// send starts the request a, with its ID; q is what its answer continues.
// It returns zero: the answer, not a timer, wakes the machine.
func (m *Machine) send(now time.Time, a Action, q request) time.Time {
	m.nextID++
	q.id, q.sent = m.nextID, now
	m.req = &q
	switch x := a.(type) {
	case Write:
		x.ID, q.purpose, q.value = m.nextID, x.Purpose, x.Value
		a = x
	case Confirm:
		x.ID, q.seenRev = m.nextID, m.seenRev
		a = x
	case Watch:
		x.ID = m.nextID
		a = x
		// No entry of the old watch reaches the machine from now on: every
		// wait starts again on what the new one delivers (P3).
		m.watching, m.synced = true, false
		m.cur, m.lost = seen{}, lostRace{}
		m.dropWatchEvents()
	}
	m.emit(a)
	return time.Time{}
}

// answer is a request's answer: WriteResult, ConfirmResult, WatchStarted.
type answer interface {
	Event
	result() (uint64, ErrClass, error)
}

func (r WriteResult) result() (uint64, ErrClass, error)   { return r.ID, r.Class, r.Err }
func (r ConfirmResult) result() (uint64, ErrClass, error) { return r.ID, r.Class, r.Err }
func (r WatchStarted) result() (uint64, ErrClass, error)  { return r.ID, r.Class, r.Err }

// onAnswer routes a request's answer to the decision it continues; a
// bucket gone or a permanent error ends it, but a release (onReleased).
func (m *Machine) onAnswer(now time.Time, ev answer) {
	q := m.req
	id, class, err := ev.result()
	if q == nil || q.id != id {
		return // an answer to a request given up on
	}
	m.req = nil
	switch _, write := ev.(WriteResult); {
	case write && q.purpose == Release:
	case errors.Is(err, wire.ErrBucketDeleted):
		m.bucketGone(now, err, "the bucket was deleted: waiting for it to be created again")
		return
	case err != nil && class == Permanent:
		m.fail(err)
		return
	}
	switch r := ev.(type) {
	case WriteResult:
		if r.Err == nil {
			m.sawOwn(now, r.Rev, q.value)
		}
		switch q.purpose {
		case Acquire:
			m.onAcquired(now, q.a, r)
		case Renew:
			m.onRenewed(now, q.sent, r)
		case Release:
			m.onReleased(now, r)
		}
	case ConfirmResult:
		m.onConfirmed(now, q, r)
	case WatchStarted:
		m.onWatchStarted(now, r)
	}
}

// onConfirmed takes a Confirm's answer: one naming another incarnation
// than the one followed, not behind, moves the node to it (§3.5).
func (m *Machine) onConfirmed(now time.Time, c *request, r ConfirmResult) {
	switch b := r.Bucket; {
	case r.Err != nil:
		m.confirmAgain(now)
	case b.Protocol != 0 && (b.Protocol < wire.Protocol || b.Protocol > wire.BucketProtocolHi(m.p.hi())):
		m.fail(fmt.Errorf("%w: the bucket is marked for protocol %d; this node uses buckets of %d to %d (docs/production.md, \"Moving to a new version\")",
			wire.ErrProtocolVersion, b.Protocol, wire.Protocol, wire.BucketProtocolHi(m.p.hi())))
	case !b.Usable():
		m.bucketGone(now, fmt.Errorf("%w: no go-cluster.protocol or lease_ttl, or neither a first_seq nor an epoch_base: created again by another tool? (go-cluster init --rebase)", wire.ErrBucketConfig),
			"the bucket has none of the election's metadata: leading nothing until it is fixed")
	case m.behind(c, b):
		m.confirmAgain(now)
	case !m.inc.Created.IsZero() && !m.inc.Same(b):
		m.moveTo(now, b) // nothing seen of the old incarnation may carry over
	default:
		if m.incKnown && m.inc.Same(b) { // the ceiling never goes down within an incarnation (I2), even if edited
			b.MaxTTL = max(b.MaxTTL, m.inc.MaxTTL, m.inc.LeaseTTL)
			b.ClusterMaxTTL = max(b.ClusterMaxTTL, m.inc.ClusterMaxTTL)
		}
		m.inc, m.incKnown, m.membersAt, m.unread = b, true, now, false
		if c.why == toWait { // toOpen: decide opens the watch
			m.learnCeiling(now, b)
		}
	}
}

// confirmAgain asks again after a backoff a Confirm that failed or was
// answered from behind; the leader too, not a TTL later: its Confirm
// carries the switch (P16).
func (m *Machine) confirmAgain(now time.Time) {
	m.retryAt = now.Add(m.backoff())
	if m.t != nil {
		m.t.checkDue = earliest(m.t.checkDue, m.retryAt)
	}
}

// onWatchStarted: the watch is open (its current value follows), or not.
func (m *Machine) onWatchStarted(now time.Time, r WatchStarted) {
	if r.Err != nil {
		m.retryAt = now.Add(m.backoff())
		m.watching, m.incKnown = false, false // ask again before the next try
		m.dropWatchEvents()                   // of a watch taken for not opened
	}
}

// behind says a Confirm's answer b comes from a server behind (C4): it
// names an older incarnation than the one followed, or a last sequence
// below a revision seen before it was sent (C2). A larger epoch_base (a
// rebase, §5.8) is a new identity whatever its sequences.
func (m *Machine) behind(c *request, b Incarnation) bool {
	if b.EpochBase > m.inc.EpochBase || m.p.Knobs.TrustBehind {
		return false
	}
	older := b.FirstSeq < m.inc.FirstSeq || (b.FirstSeq == m.inc.FirstSeq && b.Created.Before(m.inc.Created))
	return older || b.LastSeq < c.seenRev
}

// backoff is the next delay after an error: from 50 ms up to RenewInterval, jittered.
func (m *Machine) backoff() time.Duration {
	m.fails++
	d := min(50*time.Millisecond<<min(m.fails-1, 10), m.p.RenewInterval)
	return d/2 + time.Duration(m.rnd.Int64N(int64(d/2)+1))
}

// bucketGone: the bucket does not exist (or is unusable): the node leads
// nothing and asks again with backoff for as long as it runs.
func (m *Machine) bucketGone(now time.Time, err error, msg string) {
	m.forget(now, err)
	if m.incKnown {
		m.logf(slog.LevelWarn, msg, "error", err)
	}
	m.incKnown, m.retryAt = false, now.Add(m.backoff())
}

// sawOwn takes its own write that landed at rev as seen: a decision made
// before the watch shows it must not rest on the value it replaced.
func (m *Machine) sawOwn(now time.Time, rev uint64, value []byte) {
	if m.cur.kind != Absent && m.cur.kind != None && rev <= m.cur.rev {
		return
	}
	d := judgeRange(KVEntry{Rev: rev, Op: Put, Value: value}, m.inc, !m.p.Knobs.NoRangeCheck, m.p.hi())
	m.cur, m.lost = m.next(d, rev, now), lostRace{}
	m.cur.tenureOK = d.kind == Held // its own, acknowledged over a value confirmed (P7): its release is a hand-back
}

// dropWatchEvents forgets the kept events of a replaced watch.
func (m *Machine) dropWatchEvents() {
	kept := m.kept[:0]
	for _, ev := range m.kept {
		switch ev.(type) {
		case Entry, Synced, WatchClosed:
			continue
		}
		kept = append(kept, ev)
	}
	m.kept = kept
}
