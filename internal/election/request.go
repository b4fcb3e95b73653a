package election

// The machine's requests: issuing one, and taking its answer back to the
// decision that asked.

import "time"

// reqCont says which decision continues when a request is answered.
type reqCont int

const (
	contWrite          reqCont = iota // an Write; Request.purpose says which
	contWatch                         // restartWatch
	contHistory                       // takeOver: the epoch floor, then acquire
	contResync                        // resync: read the key
	contConflictGet                   // resolveConflict: read after a renewal conflict
	contGoneUnder                     // leaseGoneUnder: the bucket's identity
	contVanished                      // vanished: the bucket's identity
	contRecreatedUnder                // recreatedUnder: the bucket's identity
	contIdentity                      // checkIdentity: the bucket's identity before a CAS
	contHandBack                      // confirmHandBack: the key's history
	contGone                          // stepBucketGone: is the bucket back?
	contLanded                        // checkLanded: the identity after an acquire
)

// identityNext is what follows checkIdentity when the bucket is the one
// the node knows.
type identityNext int

const (
	thenNothing      identityNext = iota // an advisory: nothing more
	thenHistory                          // takeOver: the history, then acquire
	thenAcquire                          // a handed-back release seen a while ago
	thenReleaseStale                     // this node's stale record seen a while ago (rule 39)
)

// Request is the request out and what its answer continues.
type Request struct {
	id      uint64
	cont    reqCont
	purpose Purpose
	rev     uint64    // write: the revision written over (0: create); takeOver's rev
	sent    time.Time // write: send time
	epoch   int64     // acquire: the epoch written
	lastSeq uint64    // acquire by Create: the bucket's last sequence it was decided on (rule 35)
	recheck bool      // acquire: check the bucket's identity once it landed (rule 38)
	value   []byte    // release: the record, for its retries
	attempt int       // release: attempts made
	present bool      // leaseGoneUnder: the read showed an older entry
	entry   KVEntry   // recreatedUnder: the entry to observe if it is a new bucket
	then    identityNext
	floor   Lease         // seed: the floor record written
	until   time.Time     // renew: the end of the renewal's time (in-flight refusals)
	cause   Cause         // landed: the election's, for the metrics
	wait    time.Duration // landed: the election's wait
}

// request sends r's action and waits for its answer.
func (m *Machine) request(r *Request, a func(id uint64) Action) {
	m.nextID++
	r.id = m.nextID
	m.req = r
	m.emit(a(r.id))
}

// write sends a write of value: Create when rev is 0, else CAS on rev.
func (m *Machine) write(r *Request, value []byte, timeout time.Duration) {
	r.cont, r.value = contWrite, value
	m.request(r, func(id uint64) Action {
		return Write{ID: id, Purpose: r.purpose, Create: r.rev == 0, Rev: r.rev, Value: value, Timeout: timeout}
	})
}

// requestTimeout bounds a request by RequestTimeout and by deadline.
func (m *Machine) requestTimeout(now, deadline time.Time) time.Duration {
	d := m.cfg.RequestTimeout
	if !deadline.IsZero() && deadline.Sub(now) < d {
		d = max(deadline.Sub(now), 0)
	}
	return d
}

// onResult takes the answer to the request out; a stale answer (of a
// request the machine no longer waits for) is dropped.
func (m *Machine) onResult(now time.Time, r Result) {
	q := m.req
	if q == nil || q.id != r.ID {
		return
	}
	m.req = nil
	switch q.cont {
	case contWrite:
		m.onWrite(now, q, r)
	case contWatch:
		m.onWatch(now, r)
	case contHistory:
		m.onHistory(now, q, r)
	case contResync:
		m.onResync(now, r)
	case contConflictGet:
		m.onConflictGet(now, r)
	case contGoneUnder:
		m.onGoneUnder(now, q, r)
	case contVanished:
		m.onVanished(now, r)
	case contRecreatedUnder:
		m.onRecreatedUnder(now, q, r)
	case contIdentity:
		m.onIdentity(now, q, r)
	case contHandBack:
		m.onHandBack(now, r)
	case contGone:
		m.onGone(now, r)
	case contLanded:
		m.onLanded(now, q, r)
	}
}

// onWrite takes a write's answer to the decision that made it.
func (m *Machine) onWrite(now time.Time, q *Request, r Result) {
	switch q.purpose {
	case Acquire:
		m.onAcquire(now, q, r)
	case Renew:
		m.onRenew(now, q, r)
	case Release:
		m.onRelease(now, q, r)
	case ReleaseStale:
		m.onReleaseStale(now, q, r)
	case Seed:
		m.onSeed(now, q, r)
	}
}

// restartWatch replaces the watch: after its channel closed, or to follow
// a bucket created anew.
func (m *Machine) restartWatch(now time.Time) {
	m.dropWatchEvents()
	m.lv.watching, m.lv.synced = false, false
	m.request(&Request{cont: contWatch}, func(id uint64) Action {
		return Watch{ID: id, Timeout: m.cfg.RequestTimeout}
	})
}

// dropWatchEvents forgets the kept events of the watch being replaced:
// the loop reads only the new watch's channel. An entry of the old one
// handled after the new watch's first entries would be taken for the
// newest (found by the simulator: a deleted bucket's last record, kept
// while requests were out, shadowed the same revision in the new one).
// The epoch and TTL of each record dropped are learned all the same
// (rule 36).
func (m *Machine) dropWatchEvents() {
	kept := m.deferred[:0]
	for _, ev := range m.deferred {
		switch e := ev.(type) {
		case Entry:
			m.learn(e.KV) // dropped unread, but a record all the same (rule 36)
			continue
		case Synced, WatchClosed:
			continue
		}
		kept = append(kept, ev)
	}
	m.deferred = kept
}

func (m *Machine) onWatch(now time.Time, r Result) {
	switch {
	case r.Err == nil:
		m.lv.watching, m.lv.watchAt = true, time.Time{}
	case r.Class == Permanent:
		m.fail(now, r.Err)
	default:
		m.lv.watchAt = now.Add(m.backoff(2, 50*time.Millisecond, m.cfg.RenewInterval))
	}
}
