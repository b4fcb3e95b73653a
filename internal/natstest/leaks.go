package natstest

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

// leakTimeout is how long CheckLeaks lets goroutines take to wind down
// (a variable so that this package's tests can shorten it).
var leakTimeout = 5 * time.Second

// CheckLeaks registers, through t.Cleanup, a check that no goroutine started
// during the test is still running when the test's cleanups are done. Call it
// FIRST in a test, so that it runs LAST, after the servers, connections and
// proxies registered later have been closed. Goroutines that already existed
// when it was called are ignored. It retries for up to 5s before reporting.
// Do not use it in a test that calls t.Parallel: goroutines of tests running
// beside it would count as leaks.
func CheckLeaks(t testing.TB) {
	t.Helper()
	opts := append([]goleak.Option{goleak.IgnoreCurrent()}, ignoredGoroutines...)
	t.Cleanup(func() {
		var err error
		if poll(leakTimeout, func() bool {
			err = goleak.Find(opts...)
			return err == nil
		}) {
			return
		}
		t.Errorf("natstest: goroutines leaked: %v", err)
	})
}

// ignoredGoroutines are the goroutines that legitimately outlive an embedded
// server's Shutdown. There are none: measured with nats-server v2.15.2 and
// nats.go v1.55.0, a standalone server and a 3-member cluster (including
// members shut down and restarted, and clients closed first) leave no
// goroutine behind once Shutdown/WaitForShutdown return. Add an entry here,
// with goleak.IgnoreTopFunction and a comment saying why, only if a new
// version of either proves otherwise.
var ignoredGoroutines []goleak.Option
