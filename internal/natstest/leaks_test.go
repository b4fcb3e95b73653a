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

// A goroutine some other test started (here: another goroutine, labelled as
// another test would be) is not this test's leak, so tests can run in
// parallel with the check on.
func TestCheckLeaksIgnoresOtherTestsGoroutines(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	f := &fakeTB{TB: t}
	CheckLeaks(f)
	started := make(chan struct{})
	go func() {
		other := &fakeTB{TB: t}
		CheckLeaks(other) // labels this goroutine as another test's
		go leakyGoroutine(stop)
		close(started)
	}()
	<-started
	f.runCleanups()
	if len(f.failures) != 0 {
		t.Fatalf("failures = %q, want none", f.failures)
	}
}

// Goroutines started by goroutines the test started are the test's too.
func TestCheckLeaksReportsGrandchildLeak(t *testing.T) {
	defer func(d time.Duration) { leakTimeout = d }(leakTimeout)
	leakTimeout = 100 * time.Millisecond

	stop := make(chan struct{})
	f := &fakeTB{TB: t}
	CheckLeaks(f)
	started := make(chan struct{})
	go func() { go leakyGoroutine(stop); close(started) }()
	<-started
	f.runCleanups()
	close(stop)
	if len(f.failures) != 1 || !strings.Contains(f.failures[0], "leakyGoroutine") {
		t.Fatalf("failures = %q, want one naming leakyGoroutine", f.failures)
	}
}
