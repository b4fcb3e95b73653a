package engine

// ReadinessCheck as the driver runs it: the checks on a goroutine, and
// the count of their results (P14). The machine hears only whether the
// node may campaign, when that changes.

import (
	"context"
	"fmt"
	"time"

	"github.com/ozanturksever/go-cluster/internal/election"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// readiness counts ReadinessCheck results: a node may campaign once a
// check has passed, and until threshold fail in a row.
type readiness struct {
	threshold int
	passed    bool
	fails     int
	last      error
}

func (r *readiness) ok() bool { return r.passed && r.fails < r.threshold }

// err is what Node.Ready reports: nil when the node may campaign.
func (r *readiness) err() error {
	switch {
	case r.ok():
		return nil
	case !r.passed && r.last == nil:
		return fmt.Errorf("%w: no readiness check has completed yet", wire.ErrNotReady)
	case !r.passed:
		return fmt.Errorf("%w: no readiness check has passed yet: %w", wire.ErrNotReady, r.last)
	}
	return fmt.Errorf("%w: %d readiness checks failed in a row: %w", wire.ErrNotReady, r.fails, r.last)
}

// onCheck counts one result, publishes Node.Ready, and tells the machine
// when the node may campaign or may not any more (a leader steps down).
func (d *driver) onCheck(err error) {
	r := &d.ready
	was := r.ok()
	r.last = err
	if err == nil {
		r.passed, r.fails = true, 0
	} else {
		r.fails++
	}
	d.view.setReady(r.err())
	switch ok := r.ok(); {
	case ok && !was:
		d.log.Info("readiness check passes; the node campaigns")
		d.feed(election.Readiness{Ready: true})
	case !ok && was:
		msg := "readiness check failed too often: the node does not campaign"
		if d.view.Tenure(d.view.Now()) != nil {
			msg = "readiness check failed too often: stepping down" // the words operators grep for
		}
		d.log.Warn(msg, "error", err, "failures", r.fails, "threshold", r.threshold)
		d.feed(election.Readiness{Ready: false})
	}
}

// runReadinessChecks calls readinessCheck every interval and hands
// each result to the election loop, until ctx ends.
func runReadinessChecks(ctx context.Context, readinessCheck func(context.Context) error, interval time.Duration, out chan<- error) {
	check := func() {
		cctx, cancel := context.WithTimeout(ctx, interval)
		defer cancel()
		err := func() (err error) {
			defer func() {
				if r := recover(); r != nil {
					err = panicError{r}
				}
			}()
			return readinessCheck(cctx)
		}()
		select {
		case out <- err:
		case <-ctx.Done():
		}
	}
	check()
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ticker.C:
			check()
		case <-ctx.Done():
			return
		}
	}
}

type panicError struct{ v any }

func (p panicError) Error() string { return fmt.Sprintf("readiness check panicked: %v", p.v) }
