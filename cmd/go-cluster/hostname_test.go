package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ozanturksever/go-cluster/health"
	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// The CLI, built and run as a real process, with nodes named after their
// hosts: status lists them, health queries one by its dotted name, and
// stepdown --to hands over to one.
func TestCLIHostNames(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	bin := buildCLI(t)
	srv := natstest.RunServer(t)
	const id = "hosts"
	ms := []*member{startMember(t, srv, id, "db1.example.com"), startMember(t, srv, id, "db2.example.com")}
	leader := waitLeader(t, ms)
	follower := other(ms, leader)
	cli := func(args ...string) result {
		t.Helper()
		return runCLI(t, bin, nil, append([]string{"-s", srv.URL(), "--cluster", id}, args...)...)
	}

	r := cli("status", "--json", "--timeout", "30s", "--settle", "2s")
	var st statusReport
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || r.code != 0 {
		t.Fatalf("status: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if st.Leader != leader.node.Config().NodeID || len(st.Members) != 2 {
		t.Errorf("status %+v, want leader %s and two members", st, leader.node.Config().NodeID)
	}
	for _, m := range st.Members {
		if m.Health != healthOK || m.HoldsLease != (m.Node == leader.node.Config().NodeID) || !strings.HasSuffix(m.Node, ".example.com") {
			t.Errorf("member %+v", m)
		}
	}

	r = cli("health", follower.node.Config().NodeID, "--json", "--timeout", "10s")
	var resp health.Response
	if err := json.Unmarshal([]byte(r.stdout), &resp); err != nil || r.code != 0 {
		t.Fatalf("health %s: exit %d, %v\n%s%s", follower.node.Config().NodeID, r.code, err, r.stdout, r.stderr)
	}
	if resp.NodeID != follower.node.Config().NodeID || resp.IsLeader() || resp.Leader != leader.node.Config().NodeID {
		t.Errorf("health of %s: %+v", follower.node.Config().NodeID, resp)
	}

	r = cli("stepdown", "--to", follower.node.Config().NodeID, "--json", "--timeout", "10s")
	var sd stepdownReport
	if err := json.Unmarshal([]byte(r.stdout), &sd); err != nil || r.code != 0 {
		t.Fatalf("stepdown --to %s: exit %d, %v\n%s%s", follower.node.Config().NodeID, r.code, err, r.stdout, r.stderr)
	}
	if sd.NewLeader != follower.node.Config().NodeID || sd.Reply == nil || sd.Reply.To != follower.node.Config().NodeID {
		t.Errorf("stepdown report %+v", sd)
	}
	if now := waitLeader(t, ms); now != follower {
		t.Errorf("%s leads, want %s", now.node.Config().NodeID, follower.node.Config().NodeID)
	}

	// Malformed host names are usage errors, refused before anything is sent.
	for _, args := range [][]string{{"health", "db1..example.com"}, {"stepdown", "--to", "db1.example.com."}, {"health", "db1.*"}} {
		if r := cli(args...); r.code != 2 || !strings.Contains(r.stderr, "label") && !strings.Contains(r.stderr, "character") {
			t.Errorf("%v: exit %d, stderr %q; want a usage error", args, r.code, r.stderr)
		}
	}
}
