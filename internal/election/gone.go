package election

// The machine's deleted bucket (rule 29): the node
// keeps running, and its memory of the epoch, for as long as it runs,
// leading nothing, until the bucket exists again; Stop ends the wait.

import (
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// bucketGone is a bucket found deleted and not seen again yet.
type bucketGone struct {
	since    time.Time // found deleted; zero when not gone
	checkAt  time.Time // look for it again at this time
	reported time.Time // when the node last said so in its log
}

// bucketGoneReport is how often a node whose bucket is gone says so again.
const bucketGoneReport = time.Minute

// bucketDeleted handles ErrBucketDeleted from any request: the tenure
// ends, the watch goes, and the node looks for the bucket every
// RenewInterval. It does not stop: its memory of the epoch is what carries
// the epoch into a bucket created again. It says so in the log at once,
// and every minute after.
func (m *Machine) bucketDeleted(now time.Time, err error) {
	switch {
	case m.gone.since.IsZero():
		m.gone.since, m.gone.reported = now, now
		m.logf(slog.LevelWarn, "the bucket was deleted; waiting for it to be created again, leading nothing", "error", err)
	case now.Sub(m.gone.reported) >= bucketGoneReport:
		m.gone.reported = now
		m.logf(slog.LevelError, "the bucket is still deleted; waiting for it, leading nothing (Stop the node to give up)",
			"gone_for", now.Sub(m.gone.since).Round(time.Second))
	}
	if m.own.t != nil {
		m.lose(now, fmt.Errorf("%w: %w", ErrEpochMismatch, err))
	}
	if m.lv.watching {
		m.emit(Unwatch{})
	}
	m.dropWatchEvents()
	m.lv.watching, m.lv.synced, m.lv.watchAt = false, false, time.Time{}
	m.gone.checkAt = now.Add(m.cfg.RenewInterval)
}

// stepBucketGone looks for the deleted bucket.
func (m *Machine) stepBucketGone(now time.Time) (time.Time, bool) {
	if now.Before(m.gone.checkAt) {
		return m.gone.checkAt, false
	}
	m.request(&Request{cont: contGone}, func(id uint64) Action {
		return Incarnation{ID: id, Timeout: m.cfg.RequestTimeout}
	})
	return time.Time{}, true
}

// onGone: once the bucket exists again, the node follows it (and,
// remembering the epoch, writes its floor there).
func (m *Machine) onGone(now time.Time, r Result) {
	switch {
	case errors.Is(r.Err, ErrBucketDeleted):
		m.bucketDeleted(now, r.Err)
	case r.Err != nil && r.Class == Permanent:
		m.failNow(now, r.Err)
	case r.Err != nil:
		m.gone.checkAt = now.Add(m.cfg.RenewInterval)
	case r.Recreated:
		m.followNewBucket(now, r)
	default:
		m.gone = bucketGone{}
		m.restartWatch(now) // not gone after all
	}
}
