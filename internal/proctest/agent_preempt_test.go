package proctest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// preemptConfig is node id's file: priority prio, preempt as given, one
// exec check on DIR/ready-<id> that logs each result with its time
// (DIR/checks-<id>: "pass|fail <unix ns>"), and a become_leader notice
// with its time in DIR/leaders.log ("<id> <unix ns>"). A run that times
// out logs nothing, yet counts as a failure: the timeout is 400ms, as a
// run (sh, then date) took more than 150ms under CI's load and a stepped
// down after 3 logged failures and that one.
func preemptConfig(natsURL, dir, id string, ttl, delay time.Duration, prio int, preempt bool) string {
	check := fmt.Sprintf(`if test -e %[1]s/ready-%[2]s; then echo "pass $(date +%%s%%N)" >> %[1]s/checks-%[2]s; else echo "fail $(date +%%s%%N)" >> %[1]s/checks-%[2]s; exit 1; fi`, dir, id)
	return fmt.Sprintf(`clusters:
  - name: agentpreempt
    connection: {servers: [%q]}
    election: {node_id: %s, lease_ttl: %s, preempt_delay: %s, priority: %d, preempt: %t}
    checks:
      - name: ready
        exec: {shell: %q}
        interval: 400ms
        timeout: 400ms
        rise: %d
        fall: %d
    notify:
      become_leader: [sh, -c, 'echo "$GO_CLUSTER_NODE $(date +%%s%%N)" >> %s/leaders.log']
`, natsURL, id, ttl, delay, prio, preempt, check, preemptRise, preemptFall, dir)
}

const preemptRise, preemptFall = 2, 4

// stamped is one line of a log written with "<word> <unix ns>".
type stamped struct {
	word string
	at   time.Time
}

func readStamped(t *testing.T, path string) []stamped {
	t.Helper()
	var out []stamped
	for _, l := range strings.Split(readFile(path), "\n") {
		f := strings.Fields(l)
		if len(f) != 2 {
			continue
		}
		ns, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			t.Fatalf("%s: bad line %q", path, l)
		}
		out = append(out, stamped{f[0], time.Unix(0, ns)})
	}
	return out
}

// logTime returns the time of the nth (from 1) line of p's log containing
// msg, and whether there is one.
func logTime(t *testing.T, p *runProc, msg string, nth int) (time.Time, bool) {
	t.Helper()
	for _, l := range strings.Split(readFile(p.stderr), "\n") {
		if !strings.Contains(l, msg) {
			continue
		}
		if nth--; nth > 0 {
			continue
		}
		f := strings.Fields(l)
		if len(f) == 0 || !strings.HasPrefix(f[0], "time=") {
			t.Fatalf("no time in %q", l)
		}
		at, err := time.Parse(time.RFC3339Nano, strings.TrimPrefix(f[0], "time="))
		if err != nil {
			t.Fatal(err)
		}
		return at, true
	}
	return time.Time{}, false
}

// count returns how many entries of s are word, at or after from and
// before to.
func count(s []stamped, word string, from, to time.Time) int {
	n := 0
	for _, e := range s {
		if e.word == word && !e.at.Before(from) && e.at.Before(to) {
			n++
		}
	}
	return n
}

// lastLeader is the node of the last line of leaders.log.
func lastLeader(t *testing.T, dir string) string {
	l := readStamped(t, filepath.Join(dir, "leaders.log"))
	if len(l) == 0 {
		return ""
	}
	return l[len(l)-1].word
}

// TestAgentCheckMovesLeadershipAndPreemptDecidesTheWayBack: a (priority
// 100) leads, b (50) follows. a's check fails: a steps down only after
// `fall` failures in a row, and b leads. a's check passes again: a is
// ready after `rise` passes; with preempt it takes leadership back, not
// before its preempt_delay (twice lease_ttl: longer than the library's
// own wait) has passed since it became ready; without preempt b keeps
// leading.
func TestAgentCheckMovesLeadershipAndPreemptDecidesTheWayBack(t *testing.T) {
	t.Parallel()
	for _, preempt := range []bool{true, false} {
		t.Run(fmt.Sprintf("preempt=%t", preempt), func(t *testing.T) {
			t.Parallel() // each its own server and agents
			checkAndPreempt(t, preempt)
		})
	}
}

func checkAndPreempt(t *testing.T, preempt bool) {
	const ttl, delay = 2 * time.Second, 4 * time.Second
	dir, a, _ := startPreemptPair(t, ttl, delay, preempt)

	// a's check fails: a steps down after `fall` failures, b leads.
	removed := time.Now()
	if err := os.Remove(filepath.Join(dir, "ready-a")); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 5*ttl, func() bool { return lastLeader(t, dir) == "b" }, "b did not take over from a, not ready")
	down, ok := logTime(t, a, "readiness check failed too often: stepping down", 1)
	if !ok {
		t.Fatalf("a did not log its step-down")
	}
	checks := readStamped(t, filepath.Join(dir, "checks-a"))
	if n := count(checks, "fail", removed, down); n < preemptFall {
		t.Fatalf("a stepped down after %d failed checks; fall is %d", n, preemptFall)
	}
	t.Logf("a stepped down %v after its check began failing", down.Sub(removed).Round(time.Millisecond))

	// a's check passes again: a is ready after `rise` passes.
	restored := time.Now()
	if err := os.WriteFile(filepath.Join(dir, "ready-a"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var ready time.Time
	natstest.WaitFor(t, 5*time.Second, func() bool { ready, ok = logTime(t, a, "readiness check passes", 2); return ok }, "a is not ready again")
	checks = readStamped(t, filepath.Join(dir, "checks-a"))
	if n := count(checks, "pass", restored, ready); n < preemptRise {
		t.Fatalf("a was ready again after %d passed checks; rise is %d", n, preemptRise)
	}

	if preempt {
		natstest.WaitFor(t, delay+3*ttl, func() bool { return lastLeader(t, dir) == "a" }, "a (priority 100) did not take leadership back from b (50)")
		back := readStamped(t, filepath.Join(dir, "leaders.log"))
		took := back[len(back)-1].at.Sub(ready)
		if took < delay {
			t.Fatalf("a took leadership back %v after it was ready: before its preempt_delay (%v)", took, delay)
		}
		t.Logf("a took leadership back %v after it was ready again (preempt_delay %v, lease_ttl %v)", took.Round(time.Millisecond), delay, ttl)
		return
	}
	// preempt: false: b keeps leading. a would have asked one
	// preempt_delay after it was ready; give it a lease_ttl more.
	for time.Since(ready) < delay+ttl {
		if l := lastLeader(t, dir); l != "b" {
			t.Fatalf("with preempt false, %s leads; b should have kept leading", l)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if a.logged("asking the leader to hand over") {
		t.Fatal("with preempt false, a asked b to hand over")
	}
}

// startPreemptPair starts agents a (priority 100, leading first) and b
// (50) on a nats-server process of their own, each with a readiness check
// on the file ready-<id> in dir, and returns once b's check passes.
func startPreemptPair(t *testing.T, ttl, delay time.Duration, preempt bool) (dir string, a, b *runProc) {
	t.Helper()
	natsBin, _ := binaries(t)
	ns := startNATS(t, natsBin)
	dir = t.TempDir()
	agents := map[string]*runProc{}
	for _, n := range []struct {
		id   string
		prio int
	}{{"a", 100}, {"b", 50}} {
		if err := os.WriteFile(filepath.Join(dir, "ready-"+n.id), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, n.id+".yaml")
		if err := os.WriteFile(file, []byte(preemptConfig(ns.URL(), dir, n.id, ttl, delay, n.prio, preempt)), 0o600); err != nil {
			t.Fatal(err)
		}
		p := &runProc{node: n.id, stderr: filepath.Join(t.TempDir(), n.id+".stderr"), exited: make(chan struct{})}
		startProc(t, p, nil, "agent", "--config", file)
		agents[n.id] = p
		if n.id == "a" {
			natstest.WaitFor(t, 5*ttl, func() bool { return lastLeader(t, dir) == "a" }, "a did not lead")
		}
	}
	a, b = agents["a"], agents["b"]
	natstest.WaitFor(t, 10*time.Second, func() bool { return b.logged("readiness check passes") }, "b is not ready")
	return dir, a, b
}
