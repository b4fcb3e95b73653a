package agent

import (
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// bareMember is a member, never started, with no checks (its readiness
// has no loops: the test alone changes it), logging to log.
func bareMember(t *testing.T, log *syncBuffer) *member {
	t.Helper()
	cl := Cluster{Name: "c1", Election: Election{NodeID: "n1"}}
	m, err := newMember(cl.withDefaults("h"), Options{Logger: slog.New(slog.NewTextHandler(log, nil)),
		Connect: func(Cluster) (Endpoint, error) { return Endpoint{}, nil }}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestOneFaultWhicheverCallerJudgesFirst: a change to not ready is
// judged by the caller that changed it (a check's result, the
// maintenance switch) and by the node's readiness check, in either
// order; it is one fault, logged and posted once. TestEveryFaultClearsOnce
// failed once under load with two: the change's caller had decided the
// fault and not yet marked the node faulted when readyCheck, judging for
// the first time, took the not ready it saw for a start fault. Here
// readyCheck judges while the change's caller is held where it reports
// to the member, on purpose, and then after it.
func TestOneFaultWhicheverCallerJudgesFirst(t *testing.T) {
	for _, readyCheckFirst := range []bool{true, false} {
		t.Run(map[bool]string{true: "readyCheck first", false: "the change's caller first"}[readyCheckFirst], func(t *testing.T) {
			natstest.CheckLeaks(t)
			var log syncBuffer
			m := bareMember(t, &log)
			defer m.discard()
			m.ready.setMaintenance(false) // judged ready
			paused, release := holdJudgement(m)
			done := make(chan struct{})
			go func() {
				defer close(done)
				m.ready.setMaintenance(true) // not ready: a fault
			}()
			<-paused
			if readyCheckFirst {
				if err := m.readyCheck(t.Context()); err == nil {
					t.Error("ready with maintenance on")
				}
			}
			release()
			<-done
			if err := m.readyCheck(t.Context()); err == nil {
				t.Error("ready with maintenance on")
			}
			if n := strings.Count(log.String(), `msg="not ready"`); n != 1 {
				t.Fatalf("%d faults for one change to not ready, judged by readyCheck while its caller judged it; log:\n%s", n, log.String())
			}
			m.mu.Lock()
			faulted := m.faulted
			m.mu.Unlock()
			if !faulted {
				t.Fatal("not ready, and not marked faulted")
			}
			if state := m.notes.currentState(); state != StateFault {
				t.Fatalf("not ready, and in %q, not %s", state, StateFault)
			}
		})
	}
}

// holdJudgement holds the next change the readiness reports to the
// member (a result, the switch) on its way there: paused is closed once
// it is held; release lets it go on.
func holdJudgement(m *member) (paused <-chan struct{}, release func()) {
	p, r := make(chan struct{}), make(chan struct{})
	next := m.ready.onChange
	m.ready.onChange = func(ready *readiness) {
		close(p)
		<-r
		next(ready)
	}
	return p, func() { close(r) }
}

// TestReloadInMaintenanceIsNoFault: a reload keeps the maintenance switch
// without a fault of its own, and returns. A guard, not a reproduction:
// before, the new checks' first judgements ran without the switch and
// could find the node ready; the switch then applied under mu was a fault
// whose post took mu again (a reload that never returns), but only if
// they came before the swap, which 50 reloads here did not show.
func TestReloadInMaintenanceIsNoFault(t *testing.T) {
	natstest.CheckLeaks(t)
	ok := filepath.Join(t.TempDir(), "ok")
	touch(t, ok)
	var log syncBuffer
	m := fileCheckMember(t, ok, time.Millisecond, &log, nil)
	defer m.discard()
	natstest.WaitFor(t, 5*time.Second, func() bool { return m.readyCheck(t.Context()) == nil }, "never ready")
	m.ready.setMaintenance(true) // the fault
	const reloads = 50
	for i := range reloads {
		done := make(chan struct{})
		go func() {
			defer close(done)
			m.setRuntime(m.config())
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("reload %d of %d in maintenance never returned", i+1, reloads)
		}
		if err := m.readyCheck(t.Context()); err == nil || !m.ready.maintenanceOn() {
			t.Fatalf("reload %d: maintenance on %v, ready: %v", i+1, m.ready.maintenanceOn(), err)
		}
	}
	if n := strings.Count(log.String(), `msg="not ready"`); n != 1 {
		t.Fatalf("%d faults for one maintenance switched on and %d reloads; log:\n%s", n, reloads, log.String())
	}
}
