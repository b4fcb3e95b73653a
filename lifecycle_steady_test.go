package cluster

import (
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// inMsgs is what the server has received from the connection named name:
// the server's own count, not the client's.
func inMsgs(t *testing.T, srv *natstest.Server, name string) int64 {
	t.Helper()
	cz, err := srv.NATS().Connz(&server.ConnzOptions{Limit: 1024})
	if err != nil {
		t.Fatalf("connz: %v", err)
	}
	for _, c := range cz.Conns {
		if c.Name == name {
			return c.InMsgs
		}
	}
	t.Fatalf("no connection named %q", name)
	return 0
}

// A follower costs the server nothing while the leader renews: it sends no
// request at all, and the leader sends one per RenewInterval. (A follower
// once re-created its watch in a loop; only the server's counts showed it.)
func TestSteadyStateFollowerSendsNothing(t *testing.T) {
	// Side by side with others: load can only delay renewals, and the
	// count's lower bound (2 renewals in 4 intervals) is looser than the
	// tenure, counted below, allows; a RequestTimeout of 2s keeps a slow
	// answer from being sent again inside the window (the upper bound).
	t.Parallel()
	srv, rec, id := setup(t)
	names := map[string]string{}
	var nodes []*Node
	for _, n := range []string{"a", "b", "c"} {
		cfg := stableConfig(id, n, srv.URL())
		cfg.RequestTimeout = 2 * time.Second
		names[n] = id + "-" + n
		cfg.NATSOptions = []nats.Option{nats.Name(names[n])}
		nodes = append(nodes, startNode(t, cfg, rec, nil))
	}
	leader := waitOneLeader(t, nodes, 5*time.Second)
	natstest.WaitFor(t, 5*time.Second, func() bool {
		for _, n := range nodes {
			if n.Leader() != leader.Config().NodeID {
				return false
			}
		}
		return true
	}, "followers did not see the leader")

	// Past start-up: wait for one renewal, then count over 4 renewals.
	start := inMsgs(t, srv, names[leader.Config().NodeID])
	natstest.WaitFor(t, 5*time.Second, func() bool { return inMsgs(t, srv, names[leader.Config().NodeID]) > start }, "the leader did not renew")
	before := map[string]int64{}
	for n, name := range names {
		before[n] = inMsgs(t, srv, name)
	}
	window := 4 * stableConfig(id, "x").RenewInterval
	holdFor(t, window, func() bool {
		for _, f := range without(nodes, leader) {
			if inMsgs(t, srv, names[f.Config().NodeID]) != before[f.Config().NodeID] {
				return false
			}
		}
		return true
	}, "followers send no messages")
	// A renewal is one message, its CAS; once a TTL (4 renewals here) the
	// leader's Confirm adds two stream infos, the bucket's and the members
	// bucket's (BenchmarkRequestsPerRenewal). The window opens after a
	// renewal's CAS was counted and its end may cut a fifth: 4 or 5 CASes
	// and at most two Confirms.
	if got := inMsgs(t, srv, names[leader.Config().NodeID]) - before[leader.Config().NodeID]; got < 4 || got > 9 {
		t.Errorf("leader sent %d messages over 4 renew intervals, want about 6 (a CAS a renewal, a Confirm of two requests a TTL)", got)
	}
	if got := rec.tenureCount(); got != 1 {
		t.Errorf("%d tenures in a steady cluster, want 1", got)
	}
	rec.check(t)
}
