package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// weightedFileCheck passes while path exists; failing, it lowers the
// node's priority by 20 (keepalived's weight -20) rather than making it
// not ready.
func weightedFileCheck(name, path string) Check {
	yes := true
	return Check{Name: name, File: &FileCheck{Path: path, Present: &yes}, Interval: Duration(50 * time.Millisecond),
		Timeout: Duration(50 * time.Millisecond), Rise: 1, Fall: 1, Weight: -20}
}

func remove(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}

// TestWeightedChecksMoveLeadershipToTheBestHost (issue 33): agents of
// priority 100 and 90, each with two weighted checks (weight -20): one
// on a dependency both share, one on its own. The shared one failing on
// both (80 and 70) keeps the leader where it is, and ready; the
// leader's own failing too (60 against 70) moves the leadership to the
// other, which keeps it; the leader's own passing again (80 against 70)
// brings it back (preempt).
func TestWeightedChecksMoveLeadershipToTheBestHost(t *testing.T) {
	// Runs alone: it holds that the leader stays for 1.5 lease_ttl, which a tenure lost to load would break.
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	dir := t.TempDir()
	shared, ownHigh, ownLow := filepath.Join(dir, "shared"), filepath.Join(dir, "high"), filepath.Join(dir, "low")
	for _, f := range []string{shared, ownHigh, ownLow} {
		touch(t, f)
	}
	names := []string{"weights"}
	high := startTestAgent(t, srv, "high", 100, names, []Check{weightedFileCheck("shared", shared), weightedFileCheck("own", ownHigh)})
	low := startTestAgent(t, srv, "low", 90, names, []Check{weightedFileCheck("shared", shared), weightedFileCheck("own", ownLow)})
	if leaderOf(t, "weights", high, low) != high {
		t.Fatal("the agent of priority 100 did not lead first")
	}

	remove(t, shared)
	natstest.WaitFor(t, 5*time.Second, func() bool { return high.standing("weights").Priority == 80 && low.standing("weights").Priority == 70 },
		"the shared check failing did not lower the priorities to 80 and 70")
	holdFor(t, priorityTTL+priorityTTL/2, func() bool { return high.leading("weights") }, "the leader of 80 leads over 70")
	if st := high.Status()[0]; !st.Ready || st.Priority != 80 {
		t.Errorf("/healthz of the leader with a failing weighted check: ready %v (%s), priority %d; want ready, 80", st.Ready, st.Reason, st.Priority)
	}

	remove(t, ownHigh)
	natstest.WaitFor(t, 10*priorityTTL, func() bool { return low.leading("weights") }, "the leader lowered to 60 did not hand over to 70")
	holdFor(t, priorityTTL+priorityTTL/2, func() bool { return low.leading("weights") }, "70 leads over 60")

	touch(t, ownHigh)
	natstest.WaitFor(t, 10*priorityTTL, func() bool { return high.leading("weights") }, "80 did not take over again from 70")
	natstest.WaitFor(t, 5*time.Second, func() bool { return high.becameLeader("weights") == 2 && low.becameLeader("weights") == 1 },
		"become_leader ran %v times, want 2 (100) and 1 (90)", lazy(func() string {
			return fmt.Sprint(high.becameLeader("weights"), " and ", low.becameLeader("weights"))
		}))
}

// standing is the agent's node's Standing in cluster name.
func (a *testAgent) standing(name string) Standing {
	a.mu.Lock()
	m := a.members[name]
	a.mu.Unlock()
	return m.standing()
}

// holdFor fails the test if cond stops holding within d.
func holdFor(t *testing.T, d time.Duration, cond func() bool, what string) {
	t.Helper()
	until := time.Now().Add(d)
	natstest.WaitFor(t, d+5*time.Second, func() bool {
		if !cond() {
			t.Fatalf("%s stopped holding", what)
		}
		return time.Now().After(until)
	}, "%s", what)
}

// lazy formats as what its function returns when the message is made.
type lazy func() string

func (l lazy) String() string { return l() }

// TestWeightIsNegativeAndHasAPriorityToLower: a weight is written -N,
// and needs a priority.
func TestWeightIsNegativeAndHasAPriorityToLower(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"positive", "clusters:\n  - name: web\n    election: {priority: 100}\n    checks:\n      - name: x\n        file: {path: /x}\n        weight: 20\n",
			"agent.yaml:7: clusters[0].checks[0].weight: 20: a weight lowers the priority while the check fails, so it is negative (-20)"},
		{"no priority", "clusters:\n  - name: web\n    checks:\n      - name: x\n        file: {path: /x}\n        weight: -20\n",
			"agent.yaml:6: clusters[0].checks[0].weight: -20 has nothing to lower: election.priority is 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := problems(t, tc.text)
			if len(got) != 1 || !strings.HasPrefix(got[0], tc.want) {
				t.Fatalf("got %q\nwant one starting %q", got, tc.want)
			}
		})
	}
	if _, err := Parse("agent.yaml", []byte("clusters:\n  - name: web\n    election: {priority: 100}\n    checks:\n      - name: x\n        file: {path: /x}\n        weight: -120\n")); err != nil {
		t.Fatalf("a weight larger than the priority (which stops at 0): %v", err)
	}
}
