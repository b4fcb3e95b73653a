package cluster

// The machine's deleted bucket (bucket_gone.go's rules, rule 29): the node
// keeps running, and its memory of the epoch, for a grace in which the
// bucket may be created again; only then does it stop with
// ErrBucketDeleted.

import (
	"errors"
	"fmt"
	"time"
)

// bucketGone is a bucket found deleted and not seen again yet.
type bucketGone struct {
	since   time.Time // found deleted; zero when not gone
	checkAt time.Time // look for it again at this time
}

// bucketGoneGrace is how long a node waits for its deleted bucket: three
// takeover waits, at least 5s.
func (m *machine) bucketGoneGrace() time.Duration {
	return max(3*m.takeoverWait(), 5*time.Second)
}

// bucketDeleted handles ErrBucketDeleted from any request: within the
// grace, the tenure ends, the watch goes, and the node looks for the
// bucket every RenewInterval. It reports false once the grace has passed.
func (m *machine) bucketDeleted(now time.Time, err error) bool {
	if m.gone.since.IsZero() {
		m.gone.since = now
	}
	if now.Sub(m.gone.since) >= m.bucketGoneGrace() {
		return false
	}
	if m.own.t != nil {
		m.lose(now, fmt.Errorf("%w: %w", ErrEpochMismatch, err))
	}
	if m.lv.watching {
		m.emit(actUnwatch{})
	}
	m.dropWatchEvents()
	m.lv.watching, m.lv.synced, m.lv.watchAt = false, false, time.Time{}
	m.gone.checkAt = now.Add(m.cfg.RenewInterval)
	return true
}

// stepBucketGone looks for the deleted bucket.
func (m *machine) stepBucketGone(now time.Time) (time.Time, bool) {
	if now.Before(m.gone.checkAt) {
		return m.gone.checkAt, false
	}
	m.request(&mRequest{cont: contGone}, func(id uint64) mAction {
		return actIncarnation{id: id, timeout: m.cfg.RequestTimeout}
	})
	return time.Time{}, true
}

// onGone: once the bucket exists again, the node follows it (and,
// remembering the epoch, writes its floor there).
func (m *machine) onGone(now time.Time, r evResult) {
	switch {
	case errors.Is(r.err, ErrBucketDeleted):
		if !m.bucketDeleted(now, r.err) {
			m.failNow(now, r.err)
		}
	case r.err != nil && r.class == classPermanent:
		m.failNow(now, r.err)
	case r.err != nil:
		m.gone.checkAt = now.Add(m.cfg.RenewInterval)
	case r.recreated:
		m.followNewBucket(now, r.lastSeq)
	default:
		m.gone = bucketGone{}
		m.restartWatch(now) // not gone after all
	}
}
