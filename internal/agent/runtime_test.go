package agent

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestNotifierRunsInOrderOneAtATime: notices run in the order posted,
// never two at once, with their environment, and close runs what is
// queued.
func TestNotifierRunsInOrderOneAtATime(t *testing.T) {
	natstest.CheckLeaks(t)
	log := filepath.Join(t.TempDir(), "log")
	cmd := []string{"sh", "-c", `echo "start $GO_CLUSTER_EPOCH $GO_CLUSTER_EVENT $GO_CLUSTER_CLUSTER $GO_CLUSTER_NODE $GO_CLUSTER_VIPS" >> ` + log + `; sleep 0.05; echo "end $GO_CLUSTER_EPOCH" >> ` + log}
	n := newNotifier(Notify{BecomeLeader: cmd, LeaderChange: cmd, Timeout: Duration(5 * time.Second)}, "c1", "n1", 0,
		[]VIP{{Address: "10.0.0.1/24"}, {Address: "10.0.0.2/24"}}, io.Discard, quiet())
	for i := 1; i <= 4; i++ {
		ev := EventBecomeLeader
		if i%2 == 0 {
			ev = EventLeaderChange
		}
		n.post(notice{event: ev, role: "leader", epoch: int64(i)}) // VIPs are named on the leader only
	}
	n.post(notice{event: EventFault, epoch: 99}) // no command: not run
	n.close()
	var want []string
	for i := 1; i <= 4; i++ {
		ev := EventBecomeLeader
		if i%2 == 0 {
			ev = EventLeaderChange
		}
		want = append(want, "start "+strconv.Itoa(i)+" "+ev+" c1 n1 10.0.0.1/24,10.0.0.2/24", "end "+strconv.Itoa(i))
	}
	got := strings.Split(strings.TrimSpace(readFile(log)), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestNotifierTimeoutKillsTheGroup: at the timeout the command and what
// it started are killed, and the next notice runs.
func TestNotifierTimeoutKillsTheGroup(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	n := newNotifier(Notify{
		BecomeLeader: []string{"sh", "-c", "sleep 30 & echo $! > " + pidFile + "; wait"},
		LeaderChange: []string{"sh", "-c", "touch " + filepath.Join(dir, "next")},
		Timeout:      Duration(300 * time.Millisecond),
	}, "c1", "n1", 0, nil, io.Discard, quiet())
	start := time.Now()
	n.post(notice{event: EventBecomeLeader})
	n.post(notice{event: EventLeaderChange})
	n.close()
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("close took %v: the timeout did not end the command", took)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(readFile(pidFile)))
	if err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 2*time.Second, func() bool { return syscall.Kill(pid, 0) != nil }, "the command's child %d outlived the timeout", pid)
	if _, err := os.Stat(filepath.Join(dir, "next")); err != nil {
		t.Fatal("the notice after the one that timed out did not run")
	}
}

// TestReadinessRiseAndFall: the first result decides; then fall failures
// in a row make the checks fail (a fault, once) and rise passes make them
// pass again. The maintenance file fails them too.
func TestReadinessRiseAndFall(t *testing.T) {
	natstest.CheckLeaks(t)
	dir := t.TempDir()
	file, maint := filepath.Join(dir, "ok"), filepath.Join(dir, "maintenance")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var faults atomic.Int32
	ready := countFaults(&faults)
	r := newReadiness([]Check{{Name: "ok", File: &FileCheck{Path: file}, Interval: Duration(10 * time.Millisecond),
		Timeout: Duration(10 * time.Millisecond), Rise: 5, Fall: 3}}, maint, func(r *readiness) { _ = ready(r) }, nil, nil)
	defer r.stop()
	natstest.WaitFor(t, 2*time.Second, func() bool { return ready(r) == nil }, "never ready")
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 2*time.Second, func() bool { return ready(r) != nil }, "never failed")
	r.mu.Lock()
	if s := r.states[0]; s.passing || s.streak != 0 {
		t.Errorf("state after the fall: %+v", s)
	}
	r.mu.Unlock()
	if faults.Load() != 1 {
		t.Errorf("%d faults, want 1", faults.Load())
	}
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 2*time.Second, func() bool { return ready(r) == nil }, "never ready again")
	if err := os.WriteFile(maint, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ready(r); err == nil || !strings.Contains(err.Error(), "maintenance") {
		t.Fatalf("ready with the maintenance file: %v", err)
	}
}

func TestRecordNeedsFallFailuresInARow(t *testing.T) {
	r := &readiness{states: []checkState{{check: Check{Name: "x", Rise: 2, Fall: 3}}}}
	fail := os.ErrNotExist
	steps := []struct {
		err  error
		pass bool
	}{{nil, true}, {fail, true}, {fail, true}, {nil, true}, {fail, true}, {fail, true}, {fail, false}, {nil, false}, {nil, true}}
	for i, s := range steps {
		r.record(0, s.err)
		if got := r.states[0].passing; got != s.pass {
			t.Fatalf("step %d: passing %v, want %v", i, got, s.pass)
		}
	}
}

// countFaults is a judgement of readiness, as the member's, that counts
// the faults it shows in faults: a test's own judgements may be the ones
// that see a fault first.
func countFaults(faults *atomic.Int32) func(*readiness) error {
	return func(r *readiness) error {
		v := r.judge()
		if v.fault {
			faults.Add(1)
		}
		return v.err
	}
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// TestReloadedReadinessIsDecidedAtOnce: a reload's checks are never "no
// result yet": unchanged ones keep their standing, new ones are probed
// before the swap. (Otherwise a reload that changes nothing of the
// election would make its leader step down.)
func TestReloadedReadinessIsDecidedAtOnce(t *testing.T) {
	natstest.CheckLeaks(t)
	dir := t.TempDir()
	ok, absent := filepath.Join(dir, "ok"), filepath.Join(dir, "absent")
	if err := os.WriteFile(ok, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	check := func(name, path string) Check {
		return Check{Name: name, File: &FileCheck{Path: path}, Interval: Duration(time.Hour), Timeout: Duration(time.Second), Rise: 1, Fall: 1}
	}
	r1 := newReadiness([]Check{check("ok", ok)}, "", nil, nil, nil)
	natstest.WaitFor(t, 2*time.Second, func() bool { return r1.judge().err == nil }, "never ready")
	// Interval an hour: the loops' own first probes race these checks;
	// the standing must already be decided when newReadiness returns.
	r2 := newReadiness([]Check{check("ok", ok), check("also-ok", ok)}, "", nil, r1, nil)
	if err := r2.judge().err; err != nil {
		t.Fatalf("reloaded with passing checks: %v", err)
	}
	var faults atomic.Int32
	ready := countFaults(&faults)
	r3 := newReadiness([]Check{check("ok", ok), check("bad", absent)}, "", func(r *readiness) { _ = ready(r) }, r2, nil)
	if err := ready(r3); err == nil || !strings.Contains(err.Error(), "check bad") {
		t.Fatalf("reloaded with a failing check: %v", err)
	}
	if faults.Load() != 1 {
		t.Fatalf("%d faults, want 1", faults.Load())
	}
	for _, r := range []*readiness{r1, r2, r3} {
		r.stop()
	}
}
