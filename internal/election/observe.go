package election

// The machine observing the lease: entries from the watch and from reads,
// and what it concludes when the key or its bucket changes out of band
// (§4.3, §5).

import (
	"fmt"
	"log/slog"
	"time"
)

// observe records an entry from the watch or a read. An older entry than
// the one seen asks whether the bucket is a new one first.
func (m *Machine) observe(now time.Time, ent KVEntry) {
	if m.lv.cur.present && ent.Rev < m.lv.cur.rev {
		m.request(&Request{cont: contRecreatedUnder, entry: ent}, func(id uint64) Action {
			return Incarnation{ID: id, Timeout: m.cfg.RequestTimeout}
		})
		return
	}
	m.observeNew(now, ent)
}

func (m *Machine) observeNew(now time.Time, ent KVEntry) {
	rev := ent.Rev
	if rev != m.lv.cur.rev || !m.lv.cur.present {
		m.lv.cur = m.decode(now, ent)
		m.lv.observations++
		if m.tim.waiting && rev > m.tim.waitAbove {
			m.tim.waiting = false
		}
		if m.sameNodeIDElsewhere(now) {
			return
		}
	}
	if m.pendingLanded(now, rev) {
		return
	}
	c := m.lv.cur
	if t := m.own.t; t != nil && rev > t.rev {
		if c.valid && m.mine(c.lease) && c.lease.Epoch == t.epoch {
			t.rev = rev // our own write that we did not hear back about
			return
		}
		m.lose(now, fmt.Errorf("%w: revision %d is not ours", ErrEpochMismatch, rev))
	}
}

// sameNodeIDElsewhere stops the node when another live process holds the
// lease under this node's NodeID (rule 48). A record naming this NodeID
// with another instance, seen first, may be a crashed predecessor's (a
// restart under the same name), and is waited out like any held record.
// A dead process has at most one write in flight (one request out at a
// time), so two more such revisions seen after the first entry are
// written by a process that runs.
func (m *Machine) sameNodeIDElsewhere(now time.Time) bool {
	c := m.lv.cur
	if !c.valid || c.lease.NodeID != m.cfg.NodeID || m.mine(c.lease) {
		return false
	}
	// New revisions only: the same record, or an older one, read again
	// after the key read absent (a lagging replica answers a direct get)
	// is no write of a live process.
	seen := m.foreignRev
	m.foreignRev = max(m.foreignRev, c.rev)
	if m.lv.observations <= 1 || c.rev <= seen {
		return false
	}
	m.foreignSelf++
	if m.foreignSelf < 2 {
		return false
	}
	m.logf(slog.LevelError, "another process runs with this NodeID and holds the lease; stopping",
		"node_id", m.cfg.NodeID, "other_instance", c.lease.Instance, "instance", m.instance, "epoch", c.lease.Epoch)
	m.fail(now, fmt.Errorf("%w: %q holds the lease from another process (instance %s; this is %s)",
		ErrDuplicateNodeID, m.cfg.NodeID, c.lease.Instance, m.instance))
	return true
}

// pendingLanded settles an acquire whose outcome was unknown, once a
// revision above the one it was written over shows up: it landed if that
// revision is this node's record at its epoch (rule 12).
func (m *Machine) pendingLanded(now time.Time, rev uint64) bool {
	p, c := m.own.pending, m.lv.cur
	if p == nil || rev <= p.above {
		return false
	}
	m.own.pending = nil
	if m.own.t == nil && c.valid && m.mine(c.lease) && c.lease.Epoch == p.epoch {
		m.landed(now, p, rev)
		return true
	}
	return false
}

// decode turns an entry into what this node saw, and remembers the highest
// epoch and the longest TTL any record carried.
func (m *Machine) decode(now time.Time, ent KVEntry) observed {
	o := observed{present: true, rev: ent.Rev, firstSeen: now, learnedAt: now}
	if ent.Op != Put {
		return o
	}
	l, err := DecodeLease(ent.Value, ent.Rev)
	if err != nil {
		return o
	}
	o.lease, o.valid = l, true
	if l.NodeID == "" && !l.Floor {
		c := m.lv.cur
		nothingBefore := !c.present && c.firstSeen.IsZero()
		o.handedBack = !nothingBefore && c.valid && c.lease.Epoch == l.Epoch
		o.firstSight = nothingBefore // confirmHandBack decides (rule 27)
	}
	m.lv.maxEpoch = max(m.lv.maxEpoch, l.Epoch)
	m.lv.maxTTL = max(m.lv.maxTTL, l.ttl())
	return o
}

// resync reads the key when the watch has not shown what a failed write
// implies, or to probe a held record.
func (m *Machine) resync(now time.Time) {
	m.tim.resyncAt = now.Add(m.cfg.RenewInterval)
	m.request(&Request{cont: contResync}, func(id uint64) Action {
		return Get{ID: id, Timeout: m.cfg.RequestTimeout}
	})
}

func (m *Machine) onResync(now time.Time, r Result) {
	switch {
	case r.NotFound:
		if m.lv.cur.present {
			m.vanished(now)
		}
	case r.Err != nil:
		if r.Class == Permanent {
			m.fail(now, r.Err)
		}
	default:
		m.observe(now, r.Entry)
	}
}

// vanished asks the bucket's identity after the key was found absent
// where this node saw an entry (rule 4).
func (m *Machine) vanished(now time.Time) {
	m.request(&Request{cont: contVanished}, func(id uint64) Action {
		return Incarnation{ID: id, Timeout: m.cfg.RequestTimeout}
	})
}

func (m *Machine) onVanished(now time.Time, r Result) {
	if r.Err != nil {
		if r.Class == Permanent {
			m.fail(now, r.Err)
		}
		return // asked again at the next resync
	}
	if r.Recreated {
		m.followNewBucket(now, r)
		return
	}
	m.lv.revFloor = max(m.lv.revFloor, r.LastSeq)
	m.lv.cur = observed{}
	m.waitFrom(now)
	m.tim.waiting = false
}

// followNewBucket moves a follower to a bucket found deleted and created
// again (r is the Incarnation that found it): the watch follows the new
// stream, and what the node saw in the old one is forgotten (not the epoch
// or TTL it remembers): the key is taken as absent from now, and waited
// out as such.
func (m *Machine) followNewBucket(now time.Time, r Result) {
	m.logf(slog.LevelWarn, "the bucket was deleted and created again; following the new one")
	m.oldWritesBlind()
	// The new stream's sequences: the old one's would count its epochs
	// above base + revision, which a node without memory takes as the
	// floor (rule 50; simulator seed 310 with raw purges).
	m.lv.revFloor, m.lv.followedNew = r.LastSeq, true
	m.foreignRev = 0 // the new stream's revisions start again
	if !r.Created.IsZero() {
		m.epochBase = epochBase(r.Created) // its epochs start at its creation (rule 50)
	}
	m.gone = bucketGone{}
	m.restartWatch(now)
	m.lv.cur = observed{}
	m.waitFrom(now)
	m.tim.waiting = false
}

// oldWritesBlind marks what this node may still have in flight to the old
// bucket as blind if it lands in the new one (rule 40, simulator seed
// 17919): an acquire whose outcome is unknown, decided on a wait it never
// waited in the new bucket, and a write of its last tenure (a renewal that
// timed out). A floor covers such a record when it shows up (rule 35); a
// release of it would be taken at once, beside the record it replaced.
// The epoch is learned when the record shows up (decode).
func (m *Machine) oldWritesBlind() {
	if p := m.own.pending; p != nil {
		m.own.blind, m.own.pending = max(m.own.blind, p.epoch), nil
	}
	m.own.blind = max(m.own.blind, m.own.lastEpoch)
}

// confirmHandBack reads the key's history for a release that was the first
// thing this node saw: it is taken at once only if the record just before
// it is a held record at the same epoch, which it hands back; otherwise it
// is waited out like a held lease (rule 27).
func (m *Machine) confirmHandBack(now time.Time) {
	m.lv.cur.firstSight = false
	m.request(&Request{cont: contHandBack}, func(id uint64) Action {
		return History{ID: id, Timeout: m.cfg.RequestTimeout}
	})
}

func (m *Machine) onHandBack(now time.Time, r Result) {
	if r.Err != nil {
		if r.Class == Permanent {
			m.fail(now, r.Err)
		}
		return // waited out
	}
	h := r.History
	for i := len(h) - 1; i > 0; i-- {
		if h[i].Rev != m.lv.cur.rev {
			continue
		}
		if h[i-1].Op != Put {
			return
		}
		l, err := DecodeLease(h[i-1].Value, h[i-1].Rev)
		if err == nil && l.NodeID != "" && l.Epoch == m.lv.cur.lease.Epoch {
			m.lv.cur.handedBack = true
			m.lv.maxTTL = max(m.lv.maxTTL, l.ttl())
		}
		return
	}
}

// checkIdentity asks the bucket's identity before a compare-and-swap on a
// revision seen a while ago (rule 21): a revision of the old stream may
// name a live record in a bucket created again. then says what follows
// when the bucket is the one known (identityNext in request.go, carried
// out by onIdentity).
func (m *Machine) checkIdentity(now time.Time, then identityNext, rev uint64) {
	timeout := m.cfg.RequestTimeout
	if m.own.t != nil {
		timeout = m.renewalTimeout(now) // a leader's (rule 41): half the time left at most
	}
	m.request(&Request{cont: contIdentity, then: then, rev: rev}, func(id uint64) Action {
		return Incarnation{ID: id, Timeout: timeout}
	})
}

func (m *Machine) onIdentity(now time.Time, q *Request, r Result) {
	switch {
	case r.Err != nil && r.Class == Permanent:
		m.fail(now, r.Err)
	case r.Err != nil:
		m.tim.failures++
		m.tim.retryAt = now.Add(m.backoff(m.tim.failures, 50*time.Millisecond, m.cfg.RenewInterval))
	case r.Recreated:
		// A leader (rule 41) or a drain: the tenure is over, and its
		// release would land on another record's revision.
		if m.own.t != nil {
			m.lose(now, fmt.Errorf("%w: %w", ErrEpochMismatch, errBucketRecreated))
		}
		m.followNewBucket(now, r)
	default:
		// Something was written since this node opened the bucket, even if
		// its watch never showed it: no longer an empty bucket (rule 28).
		m.lv.revFloor = max(m.lv.revFloor, r.LastSeq)
		m.lv.checkedSeq = r.LastSeq
		switch q.then {
		case thenHistory:
			if !m.lv.cur.present && r.LastSeq > m.lv.cur.seqAt {
				m.writtenUnseen(now, r.LastSeq)
				return
			}
			m.historyFloor(now, q.rev)
		case thenAcquire:
			m.acquire(now, q.rev)
		case thenReleaseStale:
			if m.ownStaleLease() && m.lv.cur.rev == q.rev {
				m.releaseStale(now)
			}
		}
	}
}

// onBucketAdvisory checks the bucket's identity after a stream-created
// advisory (rule 25): a follower moves to a bucket created again, and
// writes its floor there. A leader asks too (rule 41): its renewals find
// out only through a conflict, a read and a lookup, which a slow network
// can stretch past the new bucket's wait for a node started on it with no
// memory (simulator seed 3030), while the epoch it remembers is needed
// there at once.
func (m *Machine) onBucketAdvisory(now time.Time) {
	if !m.campaign {
		return
	}
	m.checkIdentity(now, thenNothing, 0)
}

// keepMissedAdvisory keeps a stream-created advisory for a reconnect
// (rule 53): the advisory is a core NATS message, lost to a node cut off
// when it was sent, and the watch of a deleted bucket stays silent. A
// follower would otherwise find a bucket created meanwhile only by
// reading back a lease unchanged for half its TTL, counted again from the
// reconnect (simulator seed 645781: n3, which knew a 3 s TTL, was
// connected again 1.16 s before n1 led in the new bucket beside the 3 s
// holder, and had written no floor).
func (m *Machine) keepMissedAdvisory(e Conn) {
	if e.Connected && e.Reconnects != m.conn.reconnects {
		m.deferred = append(m.deferred, BucketCreated{})
	}
}

// takeKeptAdvisory drops the stream-created advisories kept behind the
// request that was out, and says whether there was one.
func (m *Machine) takeKeptAdvisory() bool {
	kept, found := m.deferred[:0], false
	for _, ev := range m.deferred {
		if _, ok := ev.(BucketCreated); ok {
			found = true
			continue
		}
		kept = append(kept, ev)
	}
	m.deferred = kept
	return found
}

// onRecreatedUnder: an older entry from a bucket created again moves the
// node to the new bucket as any other finding does, watch and all (rule
// 37): the old watch's kept entries would pass for the new bucket's. What
// the node saw in the old one is forgotten, not the epoch or TTL it
// remembers; the entry itself teaches its own (rule 36), a stale read or
// not.
func (m *Machine) onRecreatedUnder(now time.Time, q *Request, r Result) {
	m.learn(q.entry)
	if r.Err != nil || !r.Recreated {
		return
	}
	if m.own.t != nil {
		m.lose(now, fmt.Errorf("%w: %w", ErrEpochMismatch, errBucketRecreated))
	}
	m.followNewBucket(now, r)
}

// observed is a lease entry as this node saw it.
type observed struct {
	present bool   // some entry exists (delete and purge markers count)
	rev     uint64 // its revision
	lease   Lease  // decoded record, when valid
	valid   bool   // decoded as a lease record (not garbage, not a marker)
	// handedBack says a released record releases what this node saw just
	// before it (a record at the same epoch), or is the first thing this
	// node sees: taken at once. A release out of the blue (an operator's,
	// a forger's) may have been written under a holder that is still
	// running, cut off: it waits the takeover wait like a held record.
	handedBack bool
	// firstSight marks a release that is the first thing this node saw:
	// the key's history tells whether it handed back the record before it
	// (confirmHandBack); until then it is not taken.
	firstSight bool
	firstSeen  time.Time
	// learnedAt is when this node learned the entry's revision. Unlike
	// firstSeen, a reconnect does not move it: a compare-and-swap on a
	// revision learned a while ago asks the bucket's identity first
	// (rules 21, 39), and a node cut off may have missed a bucket
	// created again.
	learnedAt time.Time
	expired   bool // unchanged for the takeover wait on this node's clock
	// seqAt is the stream's last sequence as this node knew it when it
	// began to count an absent key's wait: a takeover that finds it moved
	// on counts again (rule 51).
	seqAt uint64
}

// waitFrom starts the takeover wait of the lease as seen at now, and
// remembers the stream's last sequence known then (rule 51).
func (m *Machine) waitFrom(now time.Time) {
	m.lv.cur.firstSeen, m.lv.cur.seqAt = now, m.lv.revFloor
}

// released says the entry is a released record: nobody holds the lease.
func (o observed) released() bool { return o.valid && o.lease.NodeID == "" }
