package agent

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// The checks' loops and the node's readiness check judge readiness at
// the same time; these tests race them, many times over, and count the
// notices: a fault that is none, or a fault_cleared while the node is
// still not ready, is what an operator's notify commands would run.

// syncBuffer is a bytes.Buffer that goroutines may write at once.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// fileCheckMember is a member, never started, with one file check on
// path every interval, that logs to log and runs cmd on fault and
// fault_cleared.
func fileCheckMember(t *testing.T, path string, interval time.Duration, log *syncBuffer, cmd []string) *member {
	t.Helper()
	cl := Cluster{Name: "c1", Election: Election{NodeID: "n1", LeaseTTL: Duration(2 * time.Second)},
		Checks: []Check{{Name: "ok", File: &FileCheck{Path: path}, Interval: Duration(interval), Rise: 1, Fall: 1}},
		Notify: Notify{Fault: cmd, FaultCleared: cmd}}
	m, err := newMember(cl.withDefaults("h"), Options{Logger: slog.New(slog.NewTextHandler(log, nil)),
		Connect: func(Cluster) (Endpoint, error) { return Endpoint{}, nil }}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestPassingFirstResultIsNoFault: a node whose check passes from its
// first result posts no fault. readyCheck read whether the node is ready
// and whether every check had a result at two moments: a first result
// that landed between them made "no result yet" a failing first result,
// and fault then fault_cleared ran on a healthy node (CI at b45efc6:
// TestFaultClearedIsNotified got two faults). Many starts, each raced by
// readyCheck, as the node calls it.
func TestPassingFirstResultIsNoFault(t *testing.T) {
	natstest.CheckLeaks(t)
	ok := filepath.Join(t.TempDir(), "ok")
	touch(t, ok)
	const starts = 100
	for i := range starts {
		var log syncBuffer
		m := fileCheckMember(t, ok, time.Hour, &log, nil) // one probe: the first
		deadline := time.Now().Add(5 * time.Second)
		for m.readyCheck(t.Context()) != nil {
			if time.Now().After(deadline) {
				m.discard()
				t.Fatalf("start %d: never ready", i)
			}
		}
		m.discard()
		if strings.Contains(log.String(), "not ready") {
			t.Fatalf("start %d of %d: a fault on a check that passed from its first result:\n%s", i+1, starts, log.String())
		}
	}
}

// TestEveryFaultClearsOnce: a check that fails and passes again, cycle
// after cycle, with readyCheck called all along (as the node calls it,
// more often), gives fault then fault_cleared once a cycle, in order: a
// judgement read before the check's newer result must not overwrite it
// (a second fault), and a fault posted while readyCheck judged must not
// be cleared by that judgement (a fault_cleared while not ready).
func TestEveryFaultClearsOnce(t *testing.T) {
	natstest.CheckLeaks(t)
	dir := t.TempDir()
	notices, ok := filepath.Join(dir, "notices"), filepath.Join(dir, "ok")
	touch(t, ok)
	var log syncBuffer
	m := fileCheckMember(t, ok, time.Millisecond, &log, []string{"sh", "-c", `echo "$GO_CLUSTER_EVENT" >> ` + notices})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var judged atomic.Int64 // readyCheck calls done
	// The node's readiness loop, without its pause.
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				_ = m.readyCheck(t.Context())
				judged.Add(1)
			}
		}
	})
	finish := sync.OnceFunc(func() {
		close(stop)
		wg.Wait()
		m.discard() // runs the notices queued
	})
	defer finish()
	passes := func() bool { return m.CheckStates()[0].Passing }
	// Ready, as the node last judged it: the check passes and the fault
	// it had, if any, has cleared.
	readyAgain := func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		return !m.faulted
	}
	const cycles = 30
	for i := range cycles {
		natstest.WaitFor(t, 5*time.Second, func() bool { return passes() && readyAgain() }, "cycle %d: never ready", i)
		if err := os.Remove(ok); err != nil {
			t.Fatal(err)
		}
		faults := func() int { return strings.Count(log.String(), `msg="not ready"`) }
		natstest.WaitFor(t, 5*time.Second, func() bool { return faults() > i }, "cycle %d: no fault", i)
		if n := faults(); n != i+1 {
			t.Fatalf("cycle %d: %d faults in %d failures of the check; log:\n%s", i, n, i+1, log.String())
		}
		// The fault is logged, then posted. Once a readyCheck begun after
		// it ends, a readyCheck that judged the node ready before the
		// check failed has ended too: the node stays in FAULT until the
		// check passes.
		since := judged.Load()
		natstest.WaitFor(t, 5*time.Second, func() bool { return judged.Load() >= since+2 }, "cycle %d: readyCheck stuck", i)
		if state := m.notes.currentState(); state != StateFault {
			t.Fatalf("cycle %d: the check fails, and the node is in %q, not %s; log:\n%s", i, state, StateFault, log.String())
		}
		touch(t, ok)
	}
	natstest.WaitFor(t, 5*time.Second, func() bool { return passes() && readyAgain() }, "never ready at the end")
	finish()
	var want []string
	for range cycles {
		want = append(want, EventFault, EventFaultCleared)
	}
	if got := lines(notices); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("%d cycles of fail and pass: got %d notices\n%s\nwant fault, fault_cleared once a cycle; log:\n%s",
			cycles, len(got), strings.Join(got, " "), log.String())
	}
}
