package proctest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// cliBinary is the go-cluster CLI (goClusterBinary builds it once).
func cliBinary(t *testing.T) string { return goClusterBinary(t) }

// inMsgsByName reads the server's /connz: the messages it received from
// each named connection (its own count, not the client's).
func inMsgsByName(t *testing.T, monitor string) map[string]int64 {
	t.Helper()
	resp, err := http.Get(monitor + "/connz?limit=4096")
	if err != nil {
		t.Fatalf("connz: %v", err)
	}
	defer resp.Body.Close()
	var cz struct {
		Conns []struct {
			Name   string `json:"name"`
			InMsgs int64  `json:"in_msgs"`
		} `json:"connections"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&cz); err != nil {
		t.Fatalf("connz: %v", err)
	}
	out := map[string]int64{}
	for _, c := range cz.Conns {
		out[c.Name] = c.InMsgs
	}
	return out
}

// steadyWindow is how long TestProcessMembersStatusAndSteadyCost counts
// the followers' requests: 5 s, or PROCTEST_STEADY (a Go duration, "1m"
// for the full minute).
func steadyWindow(t *testing.T) time.Duration {
	if s := os.Getenv("PROCTEST_STEADY"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("PROCTEST_STEADY: %v", err)
		}
		return d
	}
	return 5 * time.Second
}

// Three node processes against a nats-server process. In a steady window
// the followers send the server nothing (no KV request, nothing at all:
// the server's own /connz counts). Then a follower is killed with SIGKILL:
// `go-cluster status` (the built CLI) shows it down, from the member
// record it left, and the other two with their roles.
func TestProcessMembersStatusAndSteadyCost(t *testing.T) {
	// Runs alone: it counts messages over a window, which a tenure lost to load would spoil.
	natstest.CheckLeaks(t)
	natsBin, nodeBin := binaries(t)
	cli := cliBinary(t)
	monPort := freePort(t)
	ns := newNATSProc(t, natsBin, "proctest", freePort(t), fmt.Sprintf("http: \"127.0.0.1:%d\"\n", monPort))
	ns.start(t)
	monitor := fmt.Sprintf("http://127.0.0.1:%d", monPort)
	fence := startFence(t)
	s := nodeSettings{bin: nodeBin, cluster: fmt.Sprintf("members-%d-%d", time.Now().UnixNano()%1e6, clusterSeq.Add(1)),
		natsURL: ns.URL(), fenceURL: fence.url, ttl: crashTTL, renew: crashRenew}
	var nodes []*nodeProc
	for i := range 3 {
		nodes = append(nodes, startNode(t, s, fmt.Sprintf("p%d", i+1)))
	}
	leader, _ := waitLeader(t, nodes, 30*time.Second, time.Time{})
	followers := others(nodes, leader)
	name := func(n *nodeProc) string { return "clusternode-" + n.id }

	// Past start-up: the leader has sent more since every node saw it.
	mark := inMsgsByName(t, monitor)
	for _, n := range nodes {
		if _, ok := mark[name(n)]; !ok {
			t.Fatalf("no connection named %s in /connz: %v", name(n), mark)
		}
	}
	natstest.WaitFor(t, 10*time.Second, func() bool {
		return inMsgsByName(t, monitor)[name(leader)] > mark[name(leader)]
	}, "the leader sent nothing")
	window := steadyWindow(t)
	before := inMsgsByName(t, monitor)
	start := time.Now()
	for time.Since(start) < window {
		now := inMsgsByName(t, monitor)
		for _, f := range followers {
			if d := now[name(f)] - before[name(f)]; d != 0 {
				t.Fatalf("follower %s sent the server %d messages %v into a steady window", f.id, d, time.Since(start).Round(time.Millisecond))
			}
		}
		time.Sleep(250 * time.Millisecond) // a sampling period, not a wait for a condition
	}
	after := inMsgsByName(t, monitor)
	for _, n := range nodes {
		if _, ok := n.find(start, func(e event) bool { return e.Event == "become" || e.Event == "lose" }); ok {
			t.Fatalf("leadership changed in the steady window; events: %s", n.describe())
		}
	}
	elapsed := time.Since(start)
	for _, f := range followers {
		t.Logf("steady %v: follower %s sent %d messages", elapsed.Round(time.Millisecond), f.id, after[name(f)]-before[name(f)])
	}
	t.Logf("steady %v: leader %s sent %d messages (renewals, and the fenced writes' ValidateLeadership)", elapsed.Round(time.Millisecond), leader.id, after[name(leader)]-before[name(leader)])

	// Kill a follower: no Stop, so its member record stays.
	killed, alive := followers[0], followers[1]
	killed.signal(syscall.SIGKILL)
	<-killed.exited
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cli, "-s", ns.URL(), "--cluster", s.cluster, "status", "--timeout", "3s")
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go-cluster status: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	out := stdout.String()
	t.Logf("go-cluster status after kill -9 of %s:\n%s", killed.id, out)
	for _, row := range [][]string{{killed.id, "down"}, {leader.id, "leader"}, {alive.id, "follower"}} {
		if !hasRow(out, row...) {
			t.Errorf("no row %v in go-cluster status:\n%s", row, out)
		}
	}
}

// hasRow reports whether a line of out starts with fields, split on
// whitespace.
func hasRow(out string, fields ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= len(fields) && strings.Join(f[:len(fields)], " ") == strings.Join(fields, " ") {
			return true
		}
	}
	return false
}
