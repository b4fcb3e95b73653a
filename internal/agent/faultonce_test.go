package agent

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// bareMember is a member, never started, with no checks (its readiness
// has no loops: the test alone changes it), logging to log.
func bareMember(t *testing.T, log *syncBuffer) *member {
	t.Helper()
	cl := Cluster{Name: "c1", Election: Election{NodeID: "n1"}}
	m, err := newMember(cl.withDefaults("h"), Options{Logger: slog.New(slog.NewTextHandler(log, nil)),
		Connect: func(Cluster) (Endpoint, error) { return Endpoint{}, nil }})
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
