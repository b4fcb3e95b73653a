package agent

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// logCmd is a notify command that appends its event, role, VIPs and
// arguments to log, one line per run.
func logCmd(log string) []string {
	return []string{"sh", "-c", `echo "$GO_CLUSTER_EVENT role=$GO_CLUSTER_ROLE vips=$GO_CLUSTER_VIPS args=$*" >> ` + log, "notify"}
}

// TestNotifierVIPsOnlyOnTheLeader: GO_CLUSTER_VIPS names the addresses
// only in the commands of a node that leads (issue 33, defect 6): a
// follower holds none.
func TestNotifierVIPsOnlyOnTheLeader(t *testing.T) {
	natstest.CheckLeaks(t)
	log := filepath.Join(t.TempDir(), "log")
	cmd := logCmd(log)
	n := newNotifier(Notify{BecomeLeader: cmd, LoseLeadership: cmd, LeaderChange: cmd, Timeout: Duration(5 * time.Second)},
		"c1", "n1", 0, []VIP{{Address: "10.0.0.1/24"}}, io.Discard, quiet())
	n.post(notice{event: EventLeaderChange, role: "follower", leader: "n2"})
	n.post(notice{event: EventBecomeLeader, role: "leader", leader: "n1"})
	n.post(notice{event: EventLoseLeadership, role: "follower"})
	n.close()
	want := []string{
		"leader_change role=follower vips= args=",
		"become_leader role=leader vips=10.0.0.1/24 args=",
		"lose_leadership role=follower vips= args=",
	}
	if got := lines(log); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestNotifyStateGetsKeepalivedArguments: notify.state is keepalived's
// `notify`: run after the event's own command on every change of state,
// with INSTANCE <cluster> <STATE> <priority> after its own arguments;
// BACKUP once the node knows a leader, MASTER, FAULT while not ready
// (not BACKUP on losing leadership then), BACKUP when the fault clears,
// STOP when the agent stops.
func TestNotifyStateGetsKeepalivedArguments(t *testing.T) {
	natstest.CheckLeaks(t)
	log := filepath.Join(t.TempDir(), "log")
	cmd := logCmd(log)
	n := newNotifier(Notify{State: append(cmd, "mine"), FaultCleared: cmd, Timeout: Duration(5 * time.Second)},
		"web", "n1", 100, nil, io.Discard, quiet())
	n.post(notice{event: EventLeaderChange, role: "follower", leader: "n2"})
	n.post(notice{event: EventLeaderChange, role: "follower", leader: ""}) // no change of state
	n.post(notice{event: EventBecomeLeader, role: "leader", leader: "n1"})
	n.post(notice{event: EventFault, role: "leader", reason: "check x failing"})
	n.post(notice{event: EventLoseLeadership, role: "follower"}) // still FAULT
	n.post(notice{event: EventFaultCleared, role: "follower"})
	n.post(notice{event: EventStop, role: "follower"})
	n.close()
	want := []string{
		"leader_change role=follower vips= args=mine INSTANCE web BACKUP 100",
		"become_leader role=leader vips= args=mine INSTANCE web MASTER 100",
		"fault role=leader vips= args=mine INSTANCE web FAULT 100",
		"fault_cleared role=follower vips= args=",
		"fault_cleared role=follower vips= args=mine INSTANCE web BACKUP 100",
		"stop role=follower vips= args=mine INSTANCE web STOP 100",
	}
	if got := lines(log); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// lines are the non-empty lines of the file at path.
func lines(path string) []string {
	var out []string
	for _, l := range strings.Split(readFile(path), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// TestFaultClearedIsNotified: a member whose check fails posts a fault,
// and fault_cleared once it passes again (issue 33, defect 6: no event
// when a fault clears).
func TestFaultClearedIsNotified(t *testing.T) {
	natstest.CheckLeaks(t)
	dir := t.TempDir()
	log, ok := filepath.Join(dir, "log"), filepath.Join(dir, "ok")
	touch(t, ok)
	cmd := logCmd(log)
	cl := Cluster{Name: "c1", Election: Election{NodeID: "n1", LeaseTTL: Duration(2 * time.Second)},
		Checks: []Check{{Name: "ok", File: &FileCheck{Path: ok}, Interval: Duration(10 * time.Millisecond), Rise: 1, Fall: 1}},
		Notify: Notify{Fault: cmd, FaultCleared: cmd, State: cmd}}
	m, err := newMember(cl.withDefaults("h"), Options{Logger: quiet(), Connect: func(Cluster) (Endpoint, error) { return Endpoint{}, nil }}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.discard()
	ready := func() bool { return m.readyCheck(t.Context()) == nil } // what the node calls every ReadinessInterval
	natstest.WaitFor(t, 5*time.Second, ready, "never ready")
	if err := os.Remove(ok); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 5*time.Second, func() bool { return !ready() }, "never failed")
	touch(t, ok)
	natstest.WaitFor(t, 5*time.Second, ready, "never ready again")
	want := []string{"fault role= vips= args=", "fault role= vips= args=INSTANCE c1 FAULT 0",
		"fault_cleared role= vips= args=", "fault_cleared role= vips= args=INSTANCE c1 BACKUP 0"}
	natstest.WaitFor(t, 5*time.Second, func() bool { return len(lines(log)) >= len(want) }, "notices: %q", lazyLines(log))
	if got := lines(log); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func touch(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

// lazyLines formats as the lines of a file when formatted.
type lazyLines string

func (l lazyLines) String() string { return strings.Join(lines(string(l)), " | ") }

// TestReloadKeepsTheNotifyState: a reload replaces the notifier; the new
// one starts in the old one's state, so notify.state does not run again
// for a state that did not change.
func TestReloadKeepsTheNotifyState(t *testing.T) {
	natstest.CheckLeaks(t)
	log := filepath.Join(t.TempDir(), "log")
	cl := Cluster{Name: "c1", Election: Election{NodeID: "n1", LeaseTTL: Duration(2 * time.Second)}, Notify: Notify{State: logCmd(log)}}
	m, err := newMember(cl.withDefaults("h"), Options{Logger: quiet(), Connect: func(Cluster) (Endpoint, error) { return Endpoint{}, nil }}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.discard()
	m.post(notice{event: EventLeaderChange, role: "follower", leader: "n2"})
	m.setRuntime(cl.withDefaults("h")) // closes the old notifier: its notice has run
	m.post(notice{event: EventLeaderChange, role: "follower", leader: "n3"})
	m.setRuntime(cl.withDefaults("h"))
	if got := lines(log); len(got) != 1 || got[0] != "leader_change role=follower vips= args=INSTANCE c1 BACKUP 0" {
		t.Fatalf("notify.state ran %q; want BACKUP once", got)
	}
}

// TestFailingAtStartIsAFault: a node whose checks fail from their first
// result is in FAULT, as keepalived starts such an instance: fault runs
// once, and fault_cleared when the check passes.
func TestFailingAtStartIsAFault(t *testing.T) {
	natstest.CheckLeaks(t)
	dir := t.TempDir()
	log, ok := filepath.Join(dir, "log"), filepath.Join(dir, "ok")
	cmd := logCmd(log)
	cl := Cluster{Name: "c1", Election: Election{NodeID: "n1", LeaseTTL: Duration(2 * time.Second)},
		Checks: []Check{{Name: "ok", File: &FileCheck{Path: ok}, Interval: Duration(10 * time.Millisecond), Rise: 1, Fall: 1}},
		Notify: Notify{Fault: cmd, FaultCleared: cmd, State: cmd}}
	m, err := newMember(cl.withDefaults("h"), Options{Logger: quiet(), Connect: func(Cluster) (Endpoint, error) { return Endpoint{}, nil }}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.discard()
	want := []string{"fault role= vips= args=", "fault role= vips= args=INSTANCE c1 FAULT 0"}
	natstest.WaitFor(t, 5*time.Second, func() bool { _ = m.readyCheck(t.Context()); return len(lines(log)) >= len(want) },
		"no fault at start: %q", lazyLines(log))
	touch(t, ok)
	natstest.WaitFor(t, 5*time.Second, func() bool { return m.readyCheck(t.Context()) == nil }, "never ready")
	want = append(want, "fault_cleared role= vips= args=", "fault_cleared role= vips= args=INSTANCE c1 BACKUP 0")
	natstest.WaitFor(t, 5*time.Second, func() bool { return len(lines(log)) >= len(want) }, "notices: %q", lazyLines(log))
	if got := lines(log); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
