package cluster

import (
	"context"
	"fmt"
	"time"
)

// runReadinessChecks calls Config.ReadinessCheck every ReadinessInterval and hands
// each result to the election loop, until ctx ends.
func runReadinessChecks(ctx context.Context, cfg Config, out chan<- error) {
	check := func() {
		cctx, cancel := context.WithTimeout(ctx, cfg.ReadinessInterval)
		defer cancel()
		err := func() (err error) {
			defer func() {
				if r := recover(); r != nil {
					err = panicError{r}
				}
			}()
			return cfg.ReadinessCheck(cctx)
		}()
		select {
		case out <- err:
		case <-ctx.Done():
		}
	}
	check()
	ticker := time.NewTicker(cfg.ReadinessInterval)
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

// readiness is what the loop knows of this node's ReadinessCheck.
type readiness struct {
	passed bool  // a check has passed since Start
	fails  int   // consecutive failed checks
	last   error // the last check's error, nil if it passed
}

// healthy reports whether this node may campaign as far as its
// ReadinessCheck is concerned: a check has passed, and fewer than
// ReadinessThreshold have failed since.
func (e *election) healthy() bool {
	return e.cfg.ReadinessCheck == nil || (e.ready.passed && e.ready.fails < e.cfg.ReadinessThreshold)
}

// readyErr is what Node.Ready reports for the loop's current readiness.
func (e *election) readyErr() error {
	switch {
	case e.healthy():
		return nil
	case !e.ready.passed && e.ready.last == nil:
		return fmt.Errorf("%w: no readiness check has completed yet", ErrNotReady)
	case !e.ready.passed:
		return fmt.Errorf("%w: no readiness check has passed yet: %w", ErrNotReady, e.ready.last)
	}
	return fmt.Errorf("%w: %d readiness checks failed in a row: %w", ErrNotReady, e.ready.fails, e.ready.last)
}

// onHealth records one ReadinessCheck result; a leader that has failed
// ReadinessThreshold checks in a row steps down.
func (e *election) onHealth(err error) {
	was := e.healthy()
	e.ready.last = err
	if err == nil {
		e.ready.passed, e.ready.fails = true, 0
		if !was {
			e.stableSince = time.Now()
			e.log.Info("readiness check passes; the node campaigns")
		}
		e.publishReady()
		return
	}
	e.ready.fails++
	e.log.Warn("readiness check failed", "error", err, "failures", e.ready.fails, "threshold", e.cfg.ReadinessThreshold)
	e.publishReady()
	if e.ready.fails == e.cfg.ReadinessThreshold && e.t != nil && !e.t.ended {
		e.log.Warn("readiness check failed too often: stepping down")
		e.beginDrain(true, "", nil)
	}
}

func (e *election) publishReady() {
	err := e.readyErr()
	e.view.mu.Lock()
	e.view.ready = err
	e.view.mu.Unlock()
}
