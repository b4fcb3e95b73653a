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
