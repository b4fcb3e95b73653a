package natstest

import (
	"strings"
	"testing"
	"time"
)

func TestCheckLeaksReportsLeak(t *testing.T) {
	defer func(d time.Duration) { leakTimeout = d }(leakTimeout)
	leakTimeout = 100 * time.Millisecond

	f := &fakeTB{TB: t}
	CheckLeaks(f)
	stop := make(chan struct{})
	go leakyGoroutine(stop)
	f.runCleanups()
	close(stop)
	if len(f.failures) != 1 || !strings.Contains(f.failures[0], "leakyGoroutine") {
		t.Fatalf("failures = %q, want one naming leakyGoroutine", f.failures)
	}
}

func TestCheckLeaksIgnoresEarlierGoroutines(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	go leakyGoroutine(stop)

	f := &fakeTB{TB: t}
	CheckLeaks(f)
	f.runCleanups()
	if len(f.failures) != 0 {
		t.Fatalf("failures = %q, want none", f.failures)
	}
}

func leakyGoroutine(stop chan struct{}) { <-stop }
