package engine

// The driver's requests: each request action of the machine (Write,
// Confirm, Watch) runs on a goroutine of its own against the store,
// bounded by the action's timeout, and its answer comes back to the loop
// as the request's own result event.

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/ozanturksever/go-cluster/internal/election"
	"github.com/ozanturksever/go-cluster/internal/store"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// answer is a request's result on its way to the loop, with what the
// loop does besides handing it to the machine.
type answer struct {
	ev      election.Event    // WriteResult, ConfirmResult or WatchStarted
	id      uint64            // the request's
	write   *election.Write   // a write: its purpose, for the log and the metrics
	sent    time.Time         // a write's send time
	err     error             // the request's error, for the log
	watcher *store.LeaseWatch // election.Watch: the watch made
}

// ask runs do as the request id on a goroutine of its own.
func (d *driver) ask(id uint64, timeout time.Duration, do func(ctx context.Context) answer) {
	d.requests.Add(1)
	go func() {
		defer d.requests.Done()
		ctx, cancel := context.WithTimeout(d.base, timeout)
		a := do(ctx)
		cancel()
		a.id = id
		select {
		case d.answers <- a:
		case <-d.base.Done():
			if a.watcher != nil {
				a.watcher.Stop(&d.cleanup)
			}
		}
	}()
}

// write writes the lease key: a Create checked against the stream's last
// sequence, a CAS on a.Rev, or, for a renewal, the CAS that never spends
// its time on telling a deleted bucket from a slow one (store.renew). A
// replicated stream refuses any of them while a fenced state write checked
// on the lease is in flight, without comparing anything (E-rules in
// docs/design.md): each is asked again, within the same time.
func (d *driver) write(a election.Write) {
	sent := d.view.Now()
	if a.Purpose == election.Renew {
		d.view.renewalStarted() // fenced state writes hold back meanwhile
	}
	d.ask(a.ID, a.Timeout, func(ctx context.Context) answer {
		try := func() (uint64, error) {
			switch {
			case a.Purpose == election.Renew:
				return d.store.Renew(ctx, wire.LeaseKey, a.Value, a.Rev)
			case a.Create:
				return d.store.Create(ctx, wire.LeaseKey, a.Value, a.LastSeq)
			default:
				return d.store.Update(ctx, wire.LeaseKey, a.Value, a.Rev)
			}
		}
		rev, err := try()
		for attempt := 1; store.InFlightRefusal(err) && store.Pause(ctx, attempt) == nil; attempt++ {
			rev, err = try()
		}
		err = store.Tidy(err)
		r := election.WriteResult{ID: a.ID, Rev: rev, Err: err, Class: writeClass(a, err)}
		return answer{ev: r, write: &a, sent: sent, err: err}
	})
}

// writeClass is what the answer err to the lease write a means to the
// machine. A renewal still refused with 10164 when its time is up was
// never compared (E11): a fenced state write on the lease stayed in flight
// that long, the cluster slow to commit it, and nobody else wrote the
// lease. It is a renewal without a verdict, retried at once, not a lost
// compare-and-swap, which would renew nothing until the watch explained it
// (P10). An acquisition refused so is a race lost to a write in flight.
func writeClass(a election.Write, err error) election.ErrClass {
	if a.Purpose == election.Renew && store.InFlightRefusal(err) {
		return election.Transient
	}
	return store.Classify(err)
}

// confirm reads the bucket's stream info (store.Confirm).
func (d *driver) confirm(a election.Confirm) {
	d.ask(a.ID, a.Timeout, func(ctx context.Context) answer {
		inc, err := d.store.Confirm(ctx)
		err = store.Tidy(err)
		r := election.ConfirmResult{ID: a.ID, Bucket: inc, Err: err, Class: store.Classify(err)}
		return answer{ev: r, err: r.Err}
	})
}

// startWatch drops the watch and starts a new one; its entries reach the
// machine once the answer is in.
func (d *driver) startWatch(a election.Watch) {
	d.stopWatch()
	d.watchID = a.ID
	d.ask(a.ID, a.Timeout, func(ctx context.Context) answer {
		timeout := a.Timeout
		if dl, ok := ctx.Deadline(); ok {
			timeout = dl.Sub(d.view.Now())
		}
		w, err := d.store.Watch(d.base, timeout)
		err = store.Tidy(err)
		return answer{ev: election.WatchStarted{ID: a.ID, Err: err, Class: store.Classify(err)}, watcher: w, err: err}
	})
}

// stopWatch drops the watch without waiting for the network: the clean-up
// goes on in the background, counted in d.cleanup for teardown.
func (d *driver) stopWatch() {
	d.watchID = 0
	if d.watcher != nil {
		d.watcher.Stop(&d.cleanup)
		d.watcher = nil
	}
}

// onAnswer hands an answer to the machine, after what the driver does
// with it: the watch made, the renewal's end and metrics, the log, the
// bucket a Confirm read (E14).
func (d *driver) onAnswer(a answer) {
	if w := a.watcher; w != nil {
		if a.id == d.watchID {
			d.watcher = w
		} else {
			w.Stop(&d.cleanup) // the machine dropped that watch meanwhile
		}
	}
	if w := a.write; w != nil {
		d.noteWrite(w, a.sent, a.err)
	} else if a.err != nil && a.id == d.watchID {
		d.log.Warn("lease watch failed; retrying", "error", a.err)
	}
	d.noteBucket(a.ev)
	d.feed(a.ev)
}

// noteWrite logs a write's outcome and records a renewal's metrics.
func (d *driver) noteWrite(w *election.Write, sent time.Time, err error) {
	switch w.Purpose {
	case election.Renew:
		d.view.renewalEnded()
		d.cfg.Metrics.ObserveRenewal(renewalOutcome(err), d.view.Now().Sub(sent))
		switch {
		case err == nil || writeClass(*w, err) != election.Transient:
		case store.InFlightRefusal(err):
			d.log.Warn("renewal refused until its time was up: another write on the lease was in flight; retrying until the lease deadline", "error", err)
		default:
			d.log.Warn("renewal failed; retrying until the lease deadline", "error", err)
		}
	case election.Acquire:
		switch {
		case err == nil:
		case store.Classify(err) == election.Conflict:
			d.log.Debug("lost the race for the lease", "revision", w.Rev)
		default:
			d.log.Warn("campaign failed, will retry", "error", err)
		}
	case election.Release:
		if err != nil {
			d.log.Warn("a release attempt failed; after the third, followers take over when the lease expires", "error", err)
		} else {
			d.log.Info("released the lease")
		}
	}
}

// The outcomes of a renewal, for the metrics (string).
const (
	renewalOK       = "ok"
	renewalConflict = "conflict"
	renewalTimeout  = "timeout"
	renewalError    = "error"
)

// renewalOutcome is a renewal's result for the metrics.
func renewalOutcome(err error) string {
	switch {
	case err == nil:
		return renewalOK
	case store.InFlightRefusal(err): // refused uncompared until its time was up
		return renewalTimeout
	case store.Classify(err) == election.Conflict:
		return renewalConflict
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout):
		return renewalTimeout
	}
	return renewalError
}
