package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// startBare starts a node with no health wiring on nc; it is stopped at
// cleanup.
func startBare(t *testing.T, nc *nats.Conn, clusterID, nodeID string) *cluster.Node {
	t.Helper()
	n, err := cluster.NewNode(cluster.Config{
		ClusterID: clusterID, NodeID: nodeID, Conn: nc, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		LeaseTTL: 3 * time.Second, RenewInterval: 750 * time.Millisecond,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = n.Stop(ctx)
	})
	return n
}

// status lists every announced member: nodes without a health checker by
// their status replies, a crashed node as down, a stopped one not at all;
// stepdown --to accepts a node without a health checker and refuses one
// that is down.
func TestCLIStatusShowsDownMembers(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	bin := buildCLI(t)
	srv := natstest.RunServer(t)
	const id = "members"
	a := startMember(t, srv, id, "a")
	waitLeader(t, []*member{a})
	plain := startBare(t, srv.Connect(t), id, "plain.example.com")
	crashConn := srv.Connect(t)
	crashed := startBare(t, crashConn, id, "crashed")
	stopped := startBare(t, srv.Connect(t), id, "stopped")
	natstest.WaitFor(t, 10*time.Second, func() bool {
		return plain.Leader() == "a" && crashed.Leader() == "a" && stopped.Leader() == "a"
	}, "the nodes did not see the leader")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := stopped.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	crashConn.Close() // a crash: no Stop, no withdrawal
	<-crashed.Done()

	cli := func(args ...string) result {
		t.Helper()
		return runCLI(t, bin, nil, append([]string{"-s", srv.URL(), "--cluster", id}, args...)...)
	}
	r := cli("status", "--timeout", "3s")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, row := range [][]string{
		{"a", "leader", "ok", "a"}, {"plain.example.com", "follower", "-", "a"}, {"crashed", "down", "no", "answer"},
	} {
		if !containsRow(r.stdout, row...) {
			t.Errorf("no row %v:\n%s", row, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "stopped") || r.stderr != "" {
		t.Errorf("a stopped member is listed, or a warning: %q\n%s", r.stderr, r.stdout)
	}

	r = cli("status", "--json", "--timeout", "3s")
	var st statusReport
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || r.code != 0 {
		t.Fatalf("json: exit %d, %v\n%s", r.code, err, r.stdout)
	}
	states := map[string]string{}
	for _, m := range st.Members {
		states[m.Node] = m.State
		if m.Kind != wire.MemberCampaigning {
			t.Errorf("member %s kind %q", m.Node, m.Kind)
		}
	}
	if len(states) != 3 || states["a"] != wire.StatusLeader || states["plain.example.com"] != wire.StatusFollower || states["crashed"] != stateDown {
		t.Errorf("json members %v:\n%s", states, r.stdout)
	}

	// stepdown --to: refused for the down member, done for the plain one.
	r = cli("stepdown", "--to", "crashed", "--timeout", "2s")
	if r.code != 1 || !strings.Contains(r.stderr, "nothing was sent") || !a.node.IsLeader() {
		t.Errorf("stepdown --to a down member: exit %d, %q", r.code, r.stderr)
	}
	r = cli("stepdown", "--to", "plain.example.com", "--timeout", "10s")
	if r.code != 0 || !strings.Contains(r.stdout, "plain.example.com leads now") {
		t.Errorf("stepdown --to a node without health: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
}
