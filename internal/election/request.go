package election

// The one request out at a time, and which decision its answer continues.

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/ozanturksever/go-cluster/internal/wire"
)

// request is the request out, and the decision its answer continues.
type request struct {
	id      uint64
	sent    time.Time
	purpose Purpose    // a Write's
	value   []byte     // a Write's
	a       *attempt   // the acquisition of a Write, or of a Confirm toLead
	why     confirmWhy // a Confirm's
	rsnt    time.Time  // a Confirm toRenew: the renewal's send time
}

// confirmWhy says what a Confirm is for.
type confirmWhy int

const (
	toOpen  confirmWhy = iota // before a watch opens: the incarnation followed
	toWait                    // after a watch's current value, and for an unknown value or an absent key: its ceiling (P4)
	toLead                    // an acquisition landed (P7)
	toRenew                   // a renewal landed (P7)
)

// attempt is an acquisition: what it wrote, and when.
type attempt struct {
	epoch int64
	value []byte // the record written: its send time makes it this attempt's own
	ttl   time.Duration
	rev   uint64 // where it landed
	sent  time.Time
	cause Cause
	seen  time.Time // when the node first saw the value it wrote over; zero for an absent key
	// confirms counts the Confirms sent for its landing.
	confirms int
}

// send starts the request a, with its ID; q is what its answer continues.
// It returns the zero time: the answer, not a timer, wakes the machine.
func (m *Machine) send(now time.Time, a Action, q request) time.Time {
	m.nextID++
	q.id, q.sent = m.nextID, now
	m.req = &q
	switch x := a.(type) {
	case Write:
		x.ID, q.purpose, q.value = m.nextID, x.Purpose, x.Value
		a = x
	case Confirm:
		x.ID = m.nextID
		a = x
	case Watch:
		x.ID = m.nextID
		a = x
		// No entry of the old watch reaches the machine from now on: every
		// wait starts again on what the new one delivers (P3).
		m.watching, m.synced, m.viewChecked = true, false, false
		m.prev, m.cur, m.lost = m.cur, seen{}, lostRace{}
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

// onAnswer routes a request's answer to the decision it continues. A
// bucket gone or a permanent error ends whatever the request was for,
// except a release, which ends its drain on its own terms (onReleased).
func (m *Machine) onAnswer(now time.Time, ev answer) {
	q := m.req
	id, class, err := ev.result()
	if q == nil || q.id != id {
		return // an answer to a request given up on
	}
	m.req = nil
	switch _, write := ev.(WriteResult); {
	case write && q.purpose == Release:
	case errors.Is(err, ErrBucketDeleted):
		m.bucketGone(now, err)
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

// onConfirmed takes a Confirm's answer: any answer naming another
// incarnation than the one followed moves the node to it (P7).
func (m *Machine) onConfirmed(now time.Time, c *request, r ConfirmResult) {
	switch {
	case r.Err != nil:
		m.confirmFailed(now, c)
	case r.Bucket.Protocol != 0 && r.Bucket.Protocol != wire.Protocol:
		m.fail(fmt.Errorf("%w: the bucket is marked for protocol %d; this node runs protocol %d (docs/production.md, \"Moving to a new version\")",
			wire.ErrProtocolVersion, r.Bucket.Protocol, wire.Protocol))
	case !m.inc.Created.IsZero() && !m.inc.same(r.Bucket):
		// Whether or not a Confirm is due for the current watch: nothing
		// seen of the old incarnation may carry over.
		m.moveTo(now, r.Bucket)
	default:
		if m.incKnown && m.inc.same(r.Bucket) {
			// The ceiling never goes down within an incarnation (I2),
			// even if the metadata is edited by hand.
			r.Bucket.MaxTTL = max(r.Bucket.MaxTTL, m.inc.MaxTTL, m.inc.LeaseTTL)
		}
		m.inc, m.incKnown = r.Bucket, true
		switch c.why { // toOpen: decide opens the watch
		case toWait:
			m.viewChecked = true
			m.learnCeiling(now, r.Bucket)
		case toLead:
			m.lead0(now, c.a)
		case toRenew:
			m.extend(now, c.rsnt)
		}
	}
}

// confirmFailed: a Confirm went unanswered. An acquisition asks again
// while its tenure could still begin; a renewal leaves the deadline.
func (m *Machine) confirmFailed(now time.Time, c *request) {
	switch {
	case c.why == toLead && now.Before(m.deadlineOf(c.a.sent, c.a.ttl)):
		m.confirmLanding(now, c.a)
	case c.why == toLead:
		m.logf(slog.LevelWarn, "an acquisition landed but could not be confirmed before its deadline: not leading", "epoch", c.a.epoch)
	case c.why == toRenew && m.t != nil:
		m.t.renewDue = now.Add(m.backoff())
	case c.why != toRenew:
		m.retryAt = now.Add(m.backoff())
	}
}

// onWatchStarted: the watch is open (its current value follows, kept
// until now), or it could not be opened.
func (m *Machine) onWatchStarted(now time.Time, r WatchStarted) {
	if r.Err != nil {
		m.retryAt = now.Add(m.backoff())
		m.watching, m.incKnown = false, false // ask again before the next try
		m.dropWatchEvents()                   // of a watch taken for not opened
	}
}

// backoff is the next delay after a transient error: from 50 ms,
// doubling up to RenewInterval, with jitter.
func (m *Machine) backoff() time.Duration {
	m.fails++
	d := min(50*time.Millisecond<<min(m.fails-1, 10), m.p.RenewInterval)
	return d/2 + time.Duration(m.rnd.Int64N(int64(d/2)+1))
}

// bucketGone: the bucket does not exist. The node leads nothing and asks
// again with backoff for as long as it runs; a bucket created meanwhile
// is a new incarnation like any other.
func (m *Machine) bucketGone(now time.Time, err error) {
	m.forget(now, err)
	if m.incKnown {
		m.logf(slog.LevelWarn, "the bucket was deleted: waiting for it to be created again", "error", err)
	}
	m.incKnown = false
	m.retryAt = now.Add(m.backoff())
}

// sawOwn takes a write of this node's that landed at rev as seen: the
// watch shows it later, and a decision made meanwhile must not rest on
// the value it replaced.
func (m *Machine) sawOwn(now time.Time, rev uint64, value []byte) {
	if m.cur.kind != Absent && m.cur.kind != None && rev <= m.cur.rev {
		return
	}
	d := judgeRange(KVEntry{Rev: rev, Op: Put, Value: value}, m.inc.base(), !m.p.Knobs.NoRangeCheck)
	m.cur, m.lost = seen{kind: d.kind, rev: rev, d: d, first: now}, lostRace{}
}

// dropWatchEvents forgets the kept events of the watch a Watch action
// replaces: they may show another incarnation's key (the watch a node
// starts with, or one that moved without a word).
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
