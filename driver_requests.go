package cluster

// The driver's requests: each request action of the machine runs on a
// goroutine of its own against the store, bounded by the action's timeout,
// and its answer comes back to the loop as an election.Result.

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/election"
)

// answer is a request's election.Result on its way to the loop, with what the
// loop does besides handing it to the machine.
type answer struct {
	ev      election.Result
	write   *election.Write // a write: its purpose, for the log and the metrics
	sent    time.Time       // a write's send time
	watcher *leaseWatch     // election.Watch: the watch made
}

// ask runs do as the request id on a goroutine of its own.
func (d *driver) ask(id uint64, timeout time.Duration, do func(ctx context.Context) answer) {
	d.requests.Add(1)
	go func() {
		defer d.requests.Done()
		ctx, cancel := context.WithTimeout(d.base, timeout)
		a := do(ctx)
		cancel()
		a.ev.ID = id
		select {
		case d.answers <- a:
		case <-d.base.Done():
			if a.watcher != nil {
				a.watcher.Stop(&d.cleanup)
			}
		}
	}()
}

// result is an answer's election.Result for err.
func result(err error) election.Result {
	return election.Result{Err: tidy(err), Class: classify(err), InFlight: inFlightRefusal(err)}
}

// write writes the lease key: create (a CAS on revision 0), a CAS on
// a.rev, or, for a renewal, the CAS that never spends its time on telling
// a deleted bucket from a slow one (store.renew). A replicated stream
// refuses any of them while a fenced state write checked on the lease is
// in flight, without comparing anything (rule 19): each is asked again,
// within the same time. Renewals and releases meet it on a busy leader
// (rule 46); a successor's acquire can meet the old leader's last writes.
func (d *driver) write(a election.Write) {
	sent := time.Now()
	a.Value = d.withPriorityNow(a)
	if a.Purpose == election.Renew {
		d.view.renewalStarted() // fenced state writes hold back meanwhile
	}
	d.ask(a.ID, a.Timeout, func(ctx context.Context) answer {
		try := func() (uint64, error) {
			switch {
			case a.Purpose == election.Renew:
				return d.store.renew(ctx, leaseKey, a.Value, a.Rev)
			case a.Create:
				return d.store.create(ctx, leaseKey, a.Value)
			default:
				return d.store.update(ctx, leaseKey, a.Value, a.Rev)
			}
		}
		rev, err := try()
		for attempt := 1; inFlightRefusal(err) && pause(ctx, attempt) == nil; attempt++ {
			rev, err = try()
		}
		r := result(err)
		r.Rev = rev
		return answer{ev: r, write: &a, sent: sent}
	})
}

// get reads the lease key.
func (d *driver) get(a election.Get) {
	d.ask(a.ID, a.Timeout, func(ctx context.Context) answer {
		ent, err := d.store.get(ctx, leaseKey)
		r := result(err)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
			r.NotFound = true
		case err == nil:
			r.Entry = toEntry(ent)
		}
		return answer{ev: r}
	})
}

// history reads every revision the bucket keeps of the lease key.
func (d *driver) history(a election.History) {
	d.ask(a.ID, a.Timeout, func(ctx context.Context) answer {
		entries, err := d.store.history(ctx, leaseKey, &d.cleanup)
		r := result(err)
		for _, ent := range entries {
			r.History = append(r.History, toEntry(ent))
		}
		return answer{ev: r}
	})
}

// incarnation reads the bucket's identity and its last sequence.
func (d *driver) incarnation(a election.Incarnation) {
	d.ask(a.ID, a.Timeout, func(ctx context.Context) answer {
		recreated, lastSeq, created, err := d.store.incarnation(ctx)
		r := result(err)
		r.Recreated, r.LastSeq, r.Created = recreated, lastSeq, created
		return answer{ev: r}
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
			timeout = time.Until(dl)
		}
		w, err := d.store.watch(d.base, timeout)
		return answer{ev: result(err), watcher: w}
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
// with it: the watch made, the renewal's end and metrics, the log.
func (d *driver) onAnswer(a answer) {
	if w := a.watcher; w != nil {
		if a.ev.ID == d.watchID {
			d.watcher = w
		} else {
			w.Stop(&d.cleanup) // the machine dropped that watch meanwhile
		}
	}
	if w := a.write; w != nil {
		d.noteWrite(w, a.sent, a.ev.Err)
	} else if a.ev.Err != nil && a.watcher == nil && a.ev.ID == d.watchID {
		d.log.Warn("lease watch failed; retrying", "error", a.ev.Err)
	}
	d.feed(a.ev)
}

// noteWrite logs a write's outcome and records a renewal's metrics.
func (d *driver) noteWrite(w *election.Write, sent time.Time, err error) {
	switch w.Purpose {
	case election.Renew:
		d.view.renewalEnded()
		d.cfg.Metrics.ObserveRenewal(renewalOutcome(err), time.Since(sent))
		if err != nil && classify(err) == classTransient && !inFlightRefusal(err) {
			d.log.Warn("renewal failed; retrying until the lease deadline", "error", err)
		}
	case election.Acquire:
		switch {
		case err == nil:
		case classify(err) == classConflict:
			d.log.Debug("lost the race for the lease", "revision", w.Rev)
		default:
			d.log.Warn("campaign failed, will retry", "error", err)
		}
	case election.Release:
		if err != nil {
			d.log.Warn("could not release the lease; followers take over when it expires", "error", err)
		} else {
			d.log.Info("released the lease")
		}
	}
}

// renewalOutcome is a renewal's result for the metrics.
func renewalOutcome(err error) RenewalOutcome {
	switch {
	case err == nil:
		return RenewalOK
	case classify(err) == classConflict:
		return RenewalConflict
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout):
		return RenewalTimeout
	}
	return RenewalError
}
