package cluster

import (
	"context"
	"time"
)

// runHealthChecks calls Config.HealthCheck every HealthInterval and hands
// each result to the election loop, until ctx ends.
func runHealthChecks(ctx context.Context, cfg Config, out chan<- error) {
	check := func() {
		cctx, cancel := context.WithTimeout(ctx, cfg.HealthInterval)
		defer cancel()
		err := func() (err error) {
			defer func() {
				if r := recover(); r != nil {
					err = panicError{r}
				}
			}()
			return cfg.HealthCheck(cctx)
		}()
		select {
		case out <- err:
		case <-ctx.Done():
		}
	}
	check()
	ticker := time.NewTicker(cfg.HealthInterval)
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

func (p panicError) Error() string { return "health check panicked" }

// healthy reports whether this node may campaign as far as its
// HealthCheck is concerned.
func (e *election) healthy() bool {
	return e.cfg.HealthCheck == nil || (e.healthKnown && e.healthFails < e.cfg.HealthThreshold)
}

// onHealth records one HealthCheck result; a leader that has failed
// HealthThreshold checks in a row steps down.
func (e *election) onHealth(err error) {
	was := e.healthy()
	e.healthKnown = true
	if err == nil {
		e.healthFails = 0
		if !was {
			e.stableSince = time.Now()
			e.log.Info("health check passes; the node campaigns again")
		}
		return
	}
	e.healthFails++
	e.log.Warn("health check failed", "error", err, "failures", e.healthFails, "threshold", e.cfg.HealthThreshold)
	if e.healthFails == e.cfg.HealthThreshold && e.t != nil && !e.t.ended {
		e.log.Warn("health check failed too often: stepping down")
		e.beginDrain(true, "", nil)
	}
}
