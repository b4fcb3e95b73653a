package natstest

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"
)

// ctx returns a context cancelled at the end of the test or after d.
func ctx(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	c, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return c
}

// fakeTB records Fatalf/Errorf and cleanups instead of acting on them, to
// test the helpers' failure paths.
type fakeTB struct {
	testing.TB
	failures []string
	cleanups []func()
}

func (f *fakeTB) Helper()           {}
func (f *fakeTB) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }

// Fatalf records the failure and ends the goroutine, like testing's; use it
// only inside run.
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failures = append(f.failures, fmt.Sprintf(format, args...))
	runtime.Goexit()
}

// run calls fn on a goroutine of its own, so that Fatalf can end it, and
// waits for it.
func (f *fakeTB) run(fn func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	<-done
}
func (f *fakeTB) Errorf(format string, args ...any) {
	f.failures = append(f.failures, fmt.Sprintf(format, args...))
}

// runCleanups runs the recorded cleanups last-in first-out, as testing does.
func (f *fakeTB) runCleanups() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
	f.cleanups = nil
}
