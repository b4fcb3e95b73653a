package election

// The machine's campaign: the writes a follower makes to take the lease or
// to carry the epoch over, and the epoch a new tenure gets (§2.4, §4.1,
// §5.3).

import (
	"fmt"
	"log/slog"
	"math"
	"time"
)

// takeOver checks the bucket's identity (rule 21), reads the key's history
// for the epoch floor, then acquires a lease that expired on this node's
// clock, or an absent key (rev 0).
func (m *Machine) takeOver(now time.Time, rev uint64) {
	m.checkIdentity(now, thenHistory, rev)
}

// historyFloor reads the key's history for the highest epoch and longest
// TTL its records carried, then acquires (onHistory).
func (m *Machine) historyFloor(now time.Time, rev uint64) {
	m.request(&Request{cont: contHistory, rev: rev}, func(id uint64) Action {
		return History{ID: id, Timeout: m.cfg.RequestTimeout}
	})
}

func (m *Machine) onHistory(now time.Time, q *Request, r Result) {
	if r.Err != nil {
		if r.Class == Permanent {
			m.fail(now, r.Err)
			return
		}
		m.tim.failures++
		m.tim.retryAt = now.Add(m.backoff(m.tim.failures, 50*time.Millisecond, m.cfg.RenewInterval))
		return
	}
	for _, ent := range r.History {
		m.learn(ent)
	}
	// The history may show a longer TTL than this node knew (rule 17).
	m.lv.cur.expired = false
	if until := m.holdUntil(); now.Before(until) {
		m.logf(slog.LevelInfo, "the lease's history shows a longer TTL; waiting it out", "ttl", m.takeoverWait(), "until", until.Sub(now).Round(time.Millisecond))
		return
	}
	m.lv.cur.expired = true
	m.acquire(now, q.rev)
}

// learn remembers the epoch and TTL of a record, if ent is one.
func (m *Machine) learn(ent KVEntry) {
	if ent.Op != Put {
		return
	}
	if l, err := DecodeLease(ent.Value, ent.Rev); err == nil {
		m.lv.maxEpoch = max(m.lv.maxEpoch, l.Epoch)
		m.lv.maxTTL = max(m.lv.maxTTL, l.ttl())
	}
}

// revisionIsFloor says the revision of what the key holds is an epoch
// floor for the next tenure: over garbage and markers, at the first
// sight (a forged low epoch must not turn the epoch back), over a record
// below the bucket's first epoch (rule 50), and over a floor record,
// whose writer may remember less than a compaction removed (rule 31).
func (m *Machine) revisionIsFloor(c observed) bool {
	switch {
	case !c.valid, m.lv.observations <= 1:
		return true
	case c.lease.Epoch <= m.epochBase && !m.knobs.NoEpochBase:
		// Below the bucket's first epoch: no node of this bucket wrote
		// it (rule 50); a forger's, or a writer's that knew no base.
		return true
	case c.lease.Floor && !m.knobs.FloorWithoutRevision:
		return true
	}
	return m.knobs.RevisionFloorAlways && !(c.released() && c.handedBack)
}

// nextEpoch is the epoch of a new tenure (§2.4).
func (m *Machine) nextEpoch() (int64, error) {
	c := m.lv.cur
	// Above a record of its own that landed blind, too, which it never
	// led: a later acquire at that epoch could not be told from it.
	// Never below the bucket's creation time (rule 50), and a revision
	// counts from there: every epoch led in the bucket is at most its
	// record's revision above the base.
	base := m.epochBase
	if m.knobs.NoEpochBase {
		base = 0
	}
	floor := max(m.lv.maxEpoch, m.own.blind, base)
	if c.valid {
		floor = max(floor, c.lease.Epoch)
	}
	switch {
	case c.present && m.revisionIsFloor(c):
		floor = max(floor, addEpoch(base, revisionEpoch(c.rev)-1))
	case !c.present:
		floor = max(floor, addEpoch(base, revisionEpoch(m.lv.revFloor)))
	}
	return epochAfter(floor)
}

// acquire writes this node's record after the bucket's identity was
// checked (rule 21): Create when rev is 0, else CAS on rev. The bucket
// may be created again between the check and the write, so the identity
// is checked again once it landed, before leading (rule 38).
func (m *Machine) acquire(now time.Time, rev uint64) {
	m.Acquire(now, rev, true)
}

// takeHandBack writes this node's record over a release handed back
// moments ago (within RenewInterval, as rule 21 trusts such a revision
// without a check) and leads as soon as it landed: the handover's path.
func (m *Machine) takeHandBack(now time.Time, rev uint64) {
	m.Acquire(now, rev, false)
}

// Acquire sends the acquire; recheck says its landing is checked
// before leading (acquire) or led at once (takeHandBack). Not on a view the
// watch has since moved past (rule 34): the takeover is decided again
// once the kept entries are handled.
func (m *Machine) Acquire(now time.Time, rev uint64, recheck bool) {
	if m.keptEntry() {
		m.logf(slog.LevelDebug, "the watch showed entries since the takeover was decided; deciding again on them")
		m.answered = maxAnswersFirst // the kept events before the next decision
		return
	}
	epoch, err := m.nextEpoch()
	if err != nil {
		m.fail(now, fmt.Errorf("acquire: %w", err))
		return
	}
	q := &Request{purpose: Acquire, rev: rev, sent: now, epoch: epoch, recheck: recheck}
	if rev == 0 {
		q.lastSeq = m.lv.checkedSeq // takeOver checked the bucket just before
	}
	m.write(q, m.heldRecord(epoch, now, now), m.cfg.RequestTimeout)
}

func (m *Machine) onAcquire(now time.Time, q *Request, r Result) {
	switch {
	case r.Err == nil:
		sent := q.sent
		if p := m.own.pending; p != nil && p.epoch == q.epoch && p.sent.Before(sent) {
			sent = p.sent // count from the first attempt at this epoch (rule 24)
		}
		m.tim.failures, m.tim.retryAt, m.own.pending = 0, time.Time{}, nil
		if q.rev == 0 && landedAfterUnseen(q.lastSeq, r.Rev) {
			m.lv.cur = m.decode(now, KVEntry{Rev: r.Rev, Op: Put, Value: q.value})
			m.landedBlind(now, q.epoch, r.Rev)
			return
		}
		cause, wait := m.electionCause(q.rev), m.electionWait(q.rev, now)
		if q.recheck {
			m.checkLanded(now, q.epoch, r.Rev, sent, cause, wait)
			return
		}
		m.become(q.epoch, r.Rev, sent, cause, wait)
	case r.Class == Conflict:
		m.waitFor(now, max(q.rev, m.lv.cur.rev))
		if !m.lv.cur.released() {
			m.tim.resyncAt = now // the key changed in a way the watch may not show
		}
		m.tim.failures = 0
	case r.Class == Permanent:
		m.fail(now, r.Err)
	default:
		// The write may still land: remember it (rule 12).
		p := &pendingAcquire{epoch: q.epoch, sent: q.sent, above: max(q.rev, m.lv.cur.rev), create: q.rev == 0, lastSeq: q.lastSeq, recheck: q.recheck}
		if old := m.own.pending; old != nil && old.epoch == p.epoch {
			// An earlier attempt wrote the same record: whichever lands,
			// the tenure counts from the earliest send (rule 24), and
			// was decided on the least the node knew (rule 35).
			p.sent, p.above = old.sent, min(old.above, p.above)
			p.create, p.lastSeq = p.create || old.create, min(old.lastSeq, p.lastSeq)
			p.recheck = p.recheck || old.recheck
		}
		m.own.pending = p
		m.tim.failures++
		m.tim.retryAt = now.Add(m.backoff(m.tim.failures, 50*time.Millisecond, m.cfg.RenewInterval))
	}
}

// checkLanded asks the bucket's identity after an acquire landed: a
// bucket created since the check before the write may hold it over a
// record of its own (rule 38; simulator seed 1665, gap D).
func (m *Machine) checkLanded(now time.Time, epoch int64, rev uint64, sent time.Time, cause Cause, wait time.Duration) {
	q := &Request{cont: contLanded, epoch: epoch, rev: rev, sent: sent, cause: cause, wait: wait}
	m.request(q, func(id uint64) Action {
		return Incarnation{ID: id, Timeout: m.requestTimeout(now, m.deadline(sent))}
	})
}

func (m *Machine) onLanded(now time.Time, q *Request, r Result) {
	m.lv.maxEpoch = max(m.lv.maxEpoch, q.epoch) // the record exists, led or not
	switch {
	case m.movedPast(q.rev):
		// While the check was out the watch showed the key written over
		// its record (kept behind the request): someone waited it out,
		// or wrote over it out of band. Lead nothing (simulator seed
		// 633042, found by the million-seed run: it led 7 ms inside
		// another tenure).
		m.logf(slog.LevelInfo, "an acquire landed, but the key has moved past it; leading nothing", "epoch", q.epoch, "revision", q.rev)
		m.answered = maxAnswersFirst // the kept events before the next decision, as rule 34
	case r.Err == nil && !r.Recreated && now.Before(m.deadline(q.sent)):
		m.lv.revFloor = max(m.lv.revFloor, r.LastSeq)
		m.become(q.epoch, q.rev, q.sent, q.cause, q.wait)
	case r.Err == nil && !r.Recreated:
		m.lv.revFloor = max(m.lv.revFloor, r.LastSeq)
		m.landedTooLate(q.epoch, q.rev) // the same bucket, too late to lead
	case r.Class == Permanent:
		m.own.blind = max(m.own.blind, q.epoch)
		m.fail(now, r.Err)
	case r.Err != nil && m.deadline(q.sent).Sub(now) > 2*minAttempt:
		m.checkLanded(now, q.epoch, q.rev, q.sent, q.cause, q.wait) // ask again while the tenure could start
	default:
		// In a bucket created since (or one not known to be the same):
		// lead nothing, write no second record at that epoch, and cover
		// this one with a floor when it shows up (rule 35); given back as
		// a release, it would be taken at once in a new bucket.
		m.own.blind = max(m.own.blind, q.epoch)
		if r.Err == nil {
			m.followNewBucket(now, r)
		}
	}
}

// landed handles this node's own record showing up after an acquire whose
// outcome was unknown: lead from its send time if time is left, otherwise
// remember the epoch as ended so that the record is released (§4.1).
func (m *Machine) landed(now time.Time, p *pendingAcquire, rev uint64) {
	m.tim.failures, m.tim.retryAt = 0, time.Time{}
	if p.create && landedAfterUnseen(p.lastSeq, rev) {
		m.landedBlind(now, p.epoch, rev)
		return
	}
	if !now.Before(m.deadline(p.sent)) {
		m.landedTooLate(p.epoch, rev)
		return
	}
	m.logf(slog.LevelInfo, "an acquire that timed out had landed", "epoch", p.epoch, "revision", rev)
	if p.recheck {
		m.checkLanded(now, p.epoch, rev, p.sent, CauseExpired, now.Sub(p.sent)) // rule 38
		return
	}
	m.become(p.epoch, rev, p.sent, CauseExpired, now.Sub(p.sent))
}

// landedTooLate remembers the epoch of an acquire that landed too late to
// lead as ended, so that its record is given back when seen (§4.1).
func (m *Machine) landedTooLate(epoch int64, rev uint64) {
	m.logf(slog.LevelInfo, "an acquire landed too late to lead; releasing it", "epoch", epoch, "revision", rev)
	m.own.lastEpoch = epoch
}

// landedAfterUnseen says a Create decided when the bucket's last sequence
// was lastSeq landed at rev above the next one: something was written in
// between that the decision did not see (rule 35). On an absent key a
// Create has no revision to fail on, so only its own revision tells.
func landedAfterUnseen(lastSeq, rev uint64) bool { return rev > lastSeq+1 }

// landedBlind handles a record of this node, at epoch, that a Create put
// at rev after writes the node did not see: perhaps a whole tenure at the
// same epoch, on a key compacted since, whose holder may still be inside
// its deadline (rule 35; simulator seed 339308). It leads nothing. The
// entries kept below rev are older than what the key holds: their epochs
// and TTLs are learned, and they are dropped. A floor record over its own
// record carries the epoch: whoever takes it over waits it out like a
// held lease and counts from its revision (rule 31). A release would be
// taken at once as a hand-back, beside that holder.
func (m *Machine) landedBlind(now time.Time, epoch int64, rev uint64) {
	m.logf(slog.LevelWarn, "an acquire landed after writes this node did not see; leading nothing, writing a floor over it",
		"epoch", epoch, "revision", rev)
	m.learnKeptBelow(rev)
	m.own.blind = epoch
	m.lv.maxEpoch = max(m.lv.maxEpoch, epoch)
	m.lv.revFloor = max(m.lv.revFloor, rev)
	m.seed(now)
}

// learnKeptBelow learns the epoch and TTL of the kept watch entries below
// rev, and drops them: the key holds rev now.
func (m *Machine) learnKeptBelow(rev uint64) {
	kept := m.deferred[:0]
	for _, ev := range m.deferred {
		if e, ok := ev.(Entry); ok && e.KV.Rev < rev {
			m.learn(e.KV)
			continue
		}
		kept = append(kept, ev)
	}
	m.deferred = kept
}

// movedPast says the key is known to have been written after revision
// rev: the view, or a watch entry kept behind the request out, is above
// it.
func (m *Machine) movedPast(rev uint64) bool {
	return (m.lv.cur.present && m.lv.cur.rev > rev) || m.keptEntryAbove(rev)
}

// keptEntry says an entry of the watch is kept, not yet handled: the
// view a decision was made on is no longer the newest.
func (m *Machine) keptEntry() bool { return m.keptEntryAbove(0) }

// keptEntryAbove says a watch entry above revision rev is kept.
func (m *Machine) keptEntryAbove(rev uint64) bool {
	for _, ev := range m.deferred {
		if e, ok := ev.(Entry); ok && e.KV.Rev > rev {
			return true
		}
	}
	return false
}

// seed writes a floor record: released, at the highest epoch and with the
// longest TTL this node knows (§5.3).
func (m *Machine) seed(now time.Time) {
	if m.keptEntry() {
		// Not on a view the watch has moved past (rule 34, rule 47): the
		// key may hold a live record, or a release handed back, that
		// the kept entries show. They are handled, and the floor decided
		// again on them.
		m.answered = maxAnswersFirst
		return
	}
	floor := Lease{Epoch: m.floorEpoch(), AcquiredAt: now.UTC(), ExpiresAt: now.UTC(), Floor: true,
		TTLMillis: m.takeoverWait().Milliseconds()}
	rev := uint64(0)
	if m.lv.cur.present {
		rev = m.lv.cur.rev // over a marker, garbage or a lower floor
	}
	m.write(&Request{purpose: Seed, rev: rev, sent: now, floor: floor}, mustEncode(floor), m.cfg.RequestTimeout)
}

// floorEpoch is the epoch a floor carries: the highest this node knows;
// a node that knows none writes the bucket's base, below every epoch
// led in it (rule 50), or 1 when the base is unknown (rule 55).
func (m *Machine) floorEpoch() int64 {
	if m.lv.maxEpoch > 0 {
		return m.lv.maxEpoch
	}
	return max(m.epochBase, 1)
}

func (m *Machine) onSeed(now time.Time, q *Request, r Result) {
	switch {
	case r.Err == nil:
		// What the key holds now, before the watch says so: no second
		// floor over the value this one replaced (rule 26).
		m.lv.cur = observed{present: true, rev: r.Rev, lease: q.floor, valid: true, firstSeen: now, learnedAt: now}
		m.lv.observations++
		m.logf(slog.LevelInfo, "wrote the epoch floor into the lease key", "epoch", q.floor.Epoch, "over_revision", q.rev)
	case r.Class == Permanent:
		m.fail(now, r.Err)
	case r.Class == Conflict:
		m.tim.retryAt = now.Add(m.backoff(1, 50*time.Millisecond, m.cfg.RenewInterval))
		m.resync(now) // someone wrote it first: learn what
	default:
		m.tim.failures++
		m.tim.retryAt = now.Add(m.backoff(m.tim.failures, 50*time.Millisecond, m.cfg.RenewInterval))
	}
}

// waitFor stops campaigning until a revision above rev is seen.
func (m *Machine) waitFor(now time.Time, rev uint64) {
	m.tim.waiting, m.tim.waitAbove = true, rev
	m.tim.resyncAt = now.Add(m.cfg.RequestTimeout)
}

// heldRecord is this node's record holding the lease, written at now.
func (m *Machine) heldRecord(epoch int64, acquired, now time.Time) []byte {
	return mustEncode(Lease{NodeID: m.cfg.NodeID, Epoch: epoch, AcquiredAt: acquired.UTC(),
		ExpiresAt: now.Add(m.cfg.LeaseTTL).UTC(), TTLMillis: m.cfg.LeaseTTL.Milliseconds(), Priority: m.cfg.Priority,
		Metadata: m.cfg.Metadata, Instance: m.instance})
}

// releasedAt is a released record at epoch, written at now.
func releasedAt(epoch int64, acquired, now time.Time, next string) []byte {
	return mustEncode(Lease{Epoch: epoch, AcquiredAt: acquired.UTC(), ExpiresAt: now.UTC(), Next: next})
}

// pendingAcquire is an acquire whose outcome is unknown: the request timed
// out, but the write may have landed. If the watch (or a read) shows this
// node's record at this epoch, it landed, and the tenure counts from sent.
type pendingAcquire struct {
	epoch int64
	sent  time.Time
	above uint64 // the revision it was written over (0 for a create)
	// create: some attempt was a Create, decided when the bucket's last
	// sequence was lastSeq (rule 35).
	create  bool
	lastSeq uint64
	recheck bool // check the bucket's identity once it landed (rule 38)
}

// epochAfter is the epoch that follows floor, or ErrEpochExhausted.
func epochAfter(floor int64) (int64, error) {
	if floor == math.MaxInt64 {
		return 0, fmt.Errorf("%w: epoch %d cannot grow", ErrEpochExhausted, floor)
	}
	return max(floor, 0) + 1, nil
}

// epochBase is the epoch below a bucket's first (rule 50): its creation
// time in microseconds since 1970, less one; 0 when unknown.
func epochBase(created time.Time) int64 {
	if created.IsZero() {
		return 0
	}
	return max(created.UnixMicro()-1, 0)
}

// addEpoch adds two epochs that are not negative, saturating.
func addEpoch(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// revisionEpoch converts a revision to an epoch, saturating: revisions are
// unsigned, epochs are not.
func revisionEpoch(rev uint64) int64 {
	if rev > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(rev)
}

// writtenUnseen: the key is absent, but the stream's last sequence moved
// on since this node began to wait (to lastSeq): something was written
// that it never saw, perhaps a record purged from the stream by subject,
// which leaves no marker, while its holder still leads (simulator seed
// 4794 with raw purges). The wait starts again from now, as for any new
// observation (rule 51); the holder's renewal conflicts, or its deadline
// passes, within it.
func (m *Machine) writtenUnseen(now time.Time, lastSeq uint64) {
	m.logf(slog.LevelInfo, "the lease key is absent, but the bucket was written since this node began to wait; waiting again",
		"last_seq", lastSeq, "was", m.lv.cur.seqAt)
	m.lv.cur = observed{firstSeen: now, seqAt: lastSeq}
}
