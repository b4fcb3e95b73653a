package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/health"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// The CLI, built and run as a real process, against a running cluster of
// three nodes on an embedded server.
func TestCLI(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	bin := buildCLI(t)
	srv := natstest.RunServer(t)
	const id = "ops"
	ms := []*member{startMember(t, srv, id, "a"), startMember(t, srv, id, "b"), startMember(t, srv, id, "c")}
	leader := waitLeader(t, ms)
	var cooling *member // stepped down last: it sits out the next elections
	server := []string{"-s", srv.URL(), "--cluster", id}
	cli := func(args ...string) result {
		t.Helper()
		return runCLI(t, bin, nil, append(append([]string{}, server...), args...)...)
	}

	t.Run("status", func(t *testing.T) {
		// It stops once every member it knows of has answered, long before
		// the timeout. (A settle time longer than the default keeps a member
		// slowed by a loaded machine in the table.)
		start := time.Now()
		r := cli("status", "--timeout", "30s", "--settle", "2s")
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("status took %v with every member answering: it waited for the timeout", took)
		}
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		if r.stderr != "" { // a pipe: no progress shown
			t.Errorf("stderr is not a terminal, yet status wrote to it: %q", r.stderr)
		}
		lines := strings.Split(r.stdout, "\n")
		if want := "leader   " + leader.node.Config().NodeID; !strings.HasPrefix(lines[1], want) {
			t.Errorf("second line %q, want %q\n%s", lines[1], want, r.stdout)
		}
		for _, m := range ms {
			role := wire.StatusFollower
			if m == leader {
				role = wire.StatusLeader
			}
			if !containsRow(r.stdout, m.node.Config().NodeID, role, "ok", leader.node.Config().NodeID) {
				t.Errorf("no row for %s as %s:\n%s", m.node.Config().NodeID, role, r.stdout)
			}
		}
		if !strings.Contains(r.stdout, "wall-clock estimate") {
			t.Errorf("the leading time is not marked as an estimate:\n%s", r.stdout)
		}

		// The server from NATS_URL, flags after the command, JSON.
		r = runCLI(t, bin, []string{envNATSURL + "=" + srv.URL()}, "status", "--cluster", id, "--json", "--timeout", "1s", "--settle", "1s")
		if r.code != 0 {
			t.Fatalf("json: exit %d: %s", r.code, r.stderr)
		}
		var st statusReport
		if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
			t.Fatalf("json: %v\n%s", err, r.stdout)
		}
		if st.Leader != leader.node.Config().NodeID || st.Lease != stateHeld || st.Epoch != leader.node.Epoch() || st.Revision == 0 {
			t.Errorf("json status %+v, want leader %s epoch %d", st, leader.node.Config().NodeID, leader.node.Epoch())
		}
		if st.LeadingForMs == nil || st.AcquiredAt == nil || len(st.Members) != 3 {
			t.Errorf("json status lacks the tenure or members: %s", r.stdout)
		}
		for _, m := range st.Members {
			if m.Health != healthOK || m.HoldsLease != (m.Node == st.Leader) || len(m.Notes) != 0 {
				t.Errorf("member %+v", m)
			}
		}
	})

	t.Run("health", func(t *testing.T) {
		start := time.Now()
		r := cli("health", "--timeout", "30s", "--settle", "2s")
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("health took %v with every member answering: it waited for the timeout", took)
		}
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("exit %d: %q", r.code, r.stderr)
		}
		for _, m := range ms {
			if !containsRow(r.stdout, m.node.Config().NodeID) {
				t.Errorf("%s missing:\n%s", m.node.Config().NodeID, r.stdout)
			}
		}
		// One node, with the flag after the argument.
		r = cli("health", leader.node.Config().NodeID, "--json")
		if r.code != 0 {
			t.Fatalf("one node: exit %d: %s", r.code, r.stderr)
		}
		var resp health.Response
		if err := json.Unmarshal([]byte(r.stdout), &resp); err != nil {
			t.Fatalf("%v\n%s", err, r.stdout)
		}
		if resp.NodeID != leader.node.Config().NodeID || !resp.IsLeader() {
			t.Errorf("health of the leader: %+v", resp)
		}
		r = cli("health", "--json", "--timeout", "3s", "--settle", "0") // the whole timeout: generous, CI is loaded
		var all []health.Response
		if err := json.Unmarshal([]byte(r.stdout), &all); err != nil || len(all) != 3 {
			t.Errorf("health of all, JSON: %v, %d replies, exit %d\n%s\nstderr: %s", err, len(all), r.code, r.stdout, r.stderr)
		}
		r = cli("health", "zz")
		if r.code != 1 || !strings.Contains(r.stderr, `node "zz"`) {
			t.Errorf("unknown node: exit %d, stderr %q", r.code, r.stderr)
		}
	})

	t.Run("stepdown to a named node", func(t *testing.T) {
		to := other(ms, leader)
		old := leader.node.Epoch()
		r := cli("stepdown", "--to", to.node.Config().NodeID, "--timeout", "5s")
		if r.code != 0 {
			t.Fatalf("exit %d: %s%s", r.code, r.stdout, r.stderr)
		}
		want := leader.node.Config().NodeID + " stepped down from epoch " + itoa(old) + ", handing over to " + to.node.Config().NodeID
		if !strings.Contains(r.stdout, want) || !strings.Contains(r.stdout, to.node.Config().NodeID+" leads now, epoch "+itoa(old+1)) {
			t.Errorf("output %q, want %q and the new leader", r.stdout, want)
		}
		if got := waitLeader(t, ms); got != to {
			t.Fatalf("%s leads, want %s", got.node.Config().NodeID, to.node.Config().NodeID)
		}
		r = cli("status", "--json", "--timeout", "500ms")
		var st statusReport
		if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || st.Leader != to.node.Config().NodeID {
			t.Errorf("status after the handover: %v %s", err, r.stdout)
		}
		// Asking for the leader it already has sends nothing.
		r = cli("stepdown", "--to", to.node.Config().NodeID)
		if r.code != 0 || !strings.Contains(r.stdout, "already leads") || !to.node.IsLeader() {
			t.Errorf("stepdown to the leader: exit %d, %q %q", r.code, r.stdout, r.stderr)
		}
		// A node nobody runs: refused before anything is sent.
		r = cli("stepdown", "--to", "nobody")
		if r.code != 1 || !strings.Contains(r.stderr, "nothing was sent") || !to.node.IsLeader() {
			t.Errorf("stepdown to a stranger: exit %d, %q", r.code, r.stderr)
		}
		cooling, leader = leader, to
	})

	t.Run("watch", func(t *testing.T) {
		to := other(ms, leader, cooling)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append(append([]string{}, server...), "watch", "--json")...)
		cmd.Env = cliEnv(t, nil)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		events := make(chan watchEvent, 10)
		go func() {
			defer close(events)
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				var ev watchEvent
				if err := json.Unmarshal(sc.Bytes(), &ev); err == nil {
					events <- ev
				}
			}
		}()
		next := func() watchEvent {
			t.Helper()
			select {
			case ev, ok := <-events:
				if !ok {
					t.Fatalf("watch ended early: %s", stderr.String())
				}
				return ev
			case <-time.After(20 * time.Second):
				t.Fatal("no watch event in 20s")
			}
			return watchEvent{}
		}
		if ev := next(); ev.Event != eventLeader || ev.Leader != leader.node.Config().NodeID {
			t.Fatalf("first event %+v, want %s leading", ev, leader.node.Config().NodeID)
		}
		epoch := leader.node.Epoch()
		r := cli("stepdown", "--to", to.node.Config().NodeID, "--timeout", "5s")
		if r.code != 0 {
			t.Fatalf("stepdown: exit %d: %s", r.code, r.stderr)
		}
		// The release, then the new leader. With History 1, a record
		// overwritten before the watch receives it is skipped: the release
		// may not show, and then the new leader's event names the old one.
		ev := next()
		if ev.Event == stateReleased {
			if ev.Next != to.node.Config().NodeID || ev.Previous != leader.node.Config().NodeID || ev.Epoch != epoch {
				t.Errorf("release %+v, want by %s to %s", ev, leader.node.Config().NodeID, to.node.Config().NodeID)
			}
			ev = next()
		} else if ev.Previous != leader.node.Config().NodeID {
			t.Errorf("takeover %+v without the release names no previous leader", ev)
		}
		if ev.Event != eventLeader || ev.Leader != to.node.Config().NodeID {
			t.Errorf("event %+v, want %s leading", ev, to.node.Config().NodeID)
		}
		// Interrupted, it ends cleanly.
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		for range events {
		}
		if err := cmd.Wait(); err != nil {
			t.Errorf("watch: %v: %s", err, stderr.String())
		}
	})
}

// Clear errors and exit codes when the cluster does not exist, nobody
// answers, or the command line is wrong.
func TestCLIErrors(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	bin := buildCLI(t)
	srv := natstest.RunServer(t)
	// A cluster that ran once: its bucket exists, nobody runs it any more.
	ghost := startMember(t, srv, "ghost", "g1")
	natstest.WaitFor(t, 10*time.Second, ghost.node.IsLeader, "g1 did not lead")
	ghost.stop(t)

	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // in stderr
	}{
		{"status of an unknown cluster", []string{"status", "--cluster", "nope"}, 1, `cluster not found: "nope" has no KV bucket "cluster-nope"`},
		{"health of an unknown cluster", []string{"health", "--cluster", "nope"}, 1, "cluster not found"},
		{"stepdown in an unknown cluster", []string{"stepdown", "--cluster", "nope"}, 1, "cluster not found"},
		{"watch of an unknown cluster", []string{"watch", "--cluster", "nope"}, 1, "cluster not found"},
		{"stepdown with nobody leading", []string{"stepdown", "--cluster", "ghost"}, 1, "no answer on " + wire.ControlSubject("ghost")},
		{"health with nobody running", []string{"health", "--cluster", "ghost"}, 1, "no node of cluster ghost answers"},
		{"no cluster", []string{"status"}, 2, "--cluster is required"},
		{"bad cluster", []string{"status", "--cluster", "a.b"}, 2, `"a.b" has character '.'`},
		{"bad --to", []string{"stepdown", "--cluster", "x", "--to", "a b"}, 2, "--to"},
		{"unknown flag", []string{"status", "--cluster", "x", "--bogus"}, 2, "unknown flag: --bogus"},
		{"unknown command", []string{"--cluster", "x", "promote"}, 2, `unknown command "promote"`},
		{"too many arguments", []string{"health", "--cluster", "x", "a", "b"}, 2, `unexpected argument "b"`},
		{"bad timeout", []string{"status", "--cluster", "x", "--timeout", "0s"}, 2, "--timeout must be positive"},
		{"bad settle", []string{"status", "--cluster", "x", "--settle", "-1s"}, 2, "--settle must not be negative"},
		{"unknown context", []string{"status", "--cluster", "x", "--context", "nope"}, 1, `NATS context "nope" (--context): no such context`},
		{"state get of an unknown cluster", []string{"state", "get", "k", "--cluster", "nope"}, 1, `cluster not found: "nope" has no KV bucket`},
		{"state watch of an unknown cluster", []string{"state", "watch", "--cluster", "nope"}, 1, "cluster not found"},
		{"state get of a missing key", []string{"state", "get", "k", "--cluster", "ghost"}, exitNoKey, `key not found: "k" has no value in cluster ghost`},
		{"state get without a key", []string{"state", "get", "--cluster", "x"}, 2, "a KEY is required"},
		{"state get of a bad key", []string{"state", "get", "a..b", "--cluster", "x"}, 2, `cluster: invalid state key: "a..b" has an empty token`},
		{"state ls of a bad prefix", []string{"state", "ls", "a.*", "--cluster", "x"}, 2, "cluster: invalid state key"},
		{"state watch with a bad count", []string{"state", "watch", "--count", "-1", "--cluster", "x"}, 2, "--count must not be negative"},
		{"state alone", []string{"state", "--cluster", "x"}, 2, "state needs a command right after it: get, ls, watch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, bin, nil, append([]string{"-s", srv.URL(), "--timeout", "1s"}, tc.args...)...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", r.code, r.stderr, tc.code, tc.want)
			}
		})
	}

	// With nobody leading, status reports the lease (and that no member
	// answers health queries), and exits 3.
	r := runCLI(t, bin, nil, "-s", srv.URL(), "--cluster", "ghost", "status", "--timeout", "500ms")
	if r.code != exitNoLeader || !regexp.MustCompile(`none: released at epoch \d+`).MatchString(r.stdout) ||
		!strings.Contains(r.stderr, "no member answers health queries") || !regexp.MustCompile(`no leader: the lease was released at epoch \d+`).MatchString(r.stderr) {
		t.Errorf("status of a stopped cluster: exit %d, %q, %q", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, bin, nil, "-s", srv.URL(), "--cluster", "ghost", "status", "--json")
	var st statusReport
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || r.code != exitNoLeader || st.Lease != stateReleased || st.Leader != "" {
		t.Errorf("JSON status of a stopped cluster: exit %d, %v, %q", r.code, err, r.stdout)
	}
	// No server.
	r = runCLI(t, bin, nil, "-s", "nats://127.0.0.1:1", "--cluster", "x", "status")
	if r.code != 1 || !strings.Contains(r.stderr, "cannot connect to NATS at nats://127.0.0.1:1") {
		t.Errorf("no server: exit %d, %q", r.code, r.stderr)
	}
	// Help.
	r = runCLI(t, bin, nil, "help")
	if r.code != 0 || !strings.Contains(r.stdout, "stepdown [--to NODE]") || !strings.Contains(r.stdout, "3  status only: the cluster exists but nobody leads") ||
		!strings.Contains(r.stdout, "5  state get only: the key has no value") || !strings.Contains(r.stdout, "state watch [--count N] [PREFIX]") ||
		!strings.Contains(r.stdout, "--tlsca FILE") {
		t.Errorf("help: exit %d, %q", r.code, r.stdout)
	}
}

// containsRow reports whether a line of out has the given fields, in order,
// as its first whitespace-separated fields.
func containsRow(out string, fields ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < len(fields) {
			continue
		}
		match := true
		for i, want := range fields {
			match = match && f[i] == want
		}
		if match {
			return true
		}
	}
	return false
}

func itoa(i int64) string { return strconv.FormatInt(i, 10) }
