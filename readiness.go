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
