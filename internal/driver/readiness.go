package driver

import (
	"context"
	"fmt"
	"time"
)

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
