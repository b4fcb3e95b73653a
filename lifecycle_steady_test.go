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
	// count compares what was sent with what landed; a RequestTimeout of
	// 2s keeps a slow answer from being sent again inside the window.
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

	// Past start-up: wait for one renewal, then count over two TTLs (8
	// renewals), comparing what the leader sent with what landed: only
	// the leader writes the bucket, so its revisions count its CASes.
	lead := leader.Config().NodeID
	kv := openKV(t, srv.URL(), id)
	start := inMsgs(t, srv, names[lead])
	natstest.WaitFor(t, 5*time.Second, func() bool { return inMsgs(t, srv, names[lead]) > start }, "the leader did not renew")
	before := map[string]int64{}
	for n, name := range names {
		before[n] = inMsgs(t, srv, name)
	}
	rev0, ok := leaseRevision(kv)
	window := 8 * stableConfig(id, "x").RenewInterval
	holdFor(t, window, func() bool {
		for _, f := range without(nodes, leader) {
			if inMsgs(t, srv, names[f.Config().NodeID]) != before[f.Config().NodeID] {
				return false
			}
		}
		return true
	}, "followers send no messages")
	rev1, ok1 := leaseRevision(kv)
	sent := inMsgs(t, srv, names[lead]) - before[lead]
	// A renewal is one message, its CAS, and the leader sends nothing else
	// (design §4.2; BenchmarkRequestsPerRenewal). A CAS in flight at
	// either end is counted on one side only. A Confirm would be two
	// messages, once a TTL.
	landed := int64(rev1) - int64(rev0)
	if !ok || !ok1 || sent < 2 || sent-landed > 1 || landed-sent > 1 {
		t.Errorf("over 8 renew intervals the leader sent %d messages and %d CASes landed (revisions %d to %d); want one message a renewal, nothing else", sent, landed, rev0, rev1)
	}
	if got := rec.tenureCount(); got != 1 {
		t.Errorf("%d tenures in a steady cluster, want 1", got)
	}
	rec.check(t)
}
