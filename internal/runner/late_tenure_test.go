package runner

import (
	"context"
	"testing"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/faultproxy"
	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// lateTimings make a tenure seen 0.6s after its write (lateDelay) too
// late for the command: with renewals every 100ms, the default grace and
// KillLead leave a command started more than 2 renewals (0.2s) after the
// write too little time; the lease itself lasts 2.7s. Replies may take 1s.
func lateTimings(c cluster.Config) cluster.Config {
	c.LeaseTTL, c.RenewInterval, c.RequestTimeout = 3*time.Second, 100*time.Millisecond, time.Second
	return c
}

// lateDelay holds back what the server sends the candidate while it wins.
const lateDelay = 600 * time.Millisecond

// holdsFIFO is a command that holds $DEATH_FIFO open (see deathWatch) and
// dies on SIGTERM.
var holdsFIFO = []string{"sh", "-c", `echo $$ > "$DEATH_FIFO.pid"; exec 3>"$DEATH_FIFO"; while :; do sleep 0.02; done`}

// winLate makes the node behind px (started, following leader, which
// leads the same cluster on the server directly) win a tenure that it sees
// too late to start a command in: leader stops while the server's replies
// to the candidate come lateDelay late. It returns once the candidate
// leads and replies come on time again.
func winLate(t *testing.T, px *faultproxy.Proxy, leader, candidate *cluster.Node) {
	t.Helper()
	natstest.WaitFor(t, 10*time.Second, func() bool { return candidate.Leader() == leader.Config().NodeID },
		"the candidate does not see the leader")
	px.Delay(lateDelay)
	stop(t, leader)
	natstest.WaitFor(t, 10*time.Second, candidate.IsLeader, "the candidate did not win")
	px.Restore()
	tenure, ok := candidate.Tenure()
	limit := MaxGrace(candidate.Config()) + KillLead(candidate.Config())
	if left := time.Until(tenure.Deadline); ok && left > limit {
		t.Fatalf("the tenure was seen with %v left, want less than the grace and KillLead (%v): the test did not make it late", left, limit)
	}
}

// lateCluster checks the test for leaks and starts a server, a proxy to
// it, and cluster id's first node, leading on the server; the command's
// node, behind the proxy, is the test's.
func lateCluster(t *testing.T, id string) (*faultproxy.Proxy, *cluster.Node, *deathWatch) {
	t.Helper()
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	return faultproxy.New(t, srv.Addr()), startLeader(t, srv, id), newDeathWatch(t)
}

// startLeader starts a node of cluster id on srv and waits until it leads.
func startLeader(t *testing.T, srv *natstest.Server, id string) *cluster.Node {
	t.Helper()
	n := startNodeOf(t, lateTimings(cluster.Config{ClusterID: id, NodeID: "first", NATSURLs: []string{srv.URL()}}), nil)
	natstest.WaitFor(t, 10*time.Second, n.IsLeader, "the first node does not lead")
	t.Cleanup(func() { _ = n.Stop(context.Background()) })
	return n
}

// TestRunStartsTheCommandOnceALateTenureIsRenewed: a tenure won with too
// little time left for the command (its campaign's reply came late) is
// not given up while the node leads: the command starts once a renewal
// has moved the deadline away.
func TestRunStartsTheCommandOnceALateTenureIsRenewed(t *testing.T) {
	// Runs alone: a race built from timings (a tenure seen 0.6s after its write).
	px, leader, death := lateCluster(t, "late-run")
	r, err := New(Config{
		Node: lateTimings(cluster.Config{ClusterID: "late-run", NodeID: "second", NATSURLs: []string{px.URL()}}),
		Argv: holdsFIFO, Once: true, Env: []string{death.env},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := runAsync(ctx, r)
	winLate(t, px, leader, r.Node())
	waitStarted(t, r.Node(), death)
	cancel()
	if res := <-done; res.err == nil {
		t.Fatalf("Run = %d, %v after its context ended; want its error", res.code, res.err)
	}
}

// TestServiceStartsOnceALateTenureIsRenewed: the same for the agent's
// service.
func TestServiceStartsOnceALateTenureIsRenewed(t *testing.T) {
	// Runs alone: a race built from timings (a tenure seen 0.6s after its write).
	px, leader, death := lateCluster(t, "late-svc")
	svc, err := NewService(ServiceConfig{Argv: holdsFIFO, Env: []string{death.env}})
	if err != nil {
		t.Fatal(err)
	}
	n := startNodeOf(t, lateTimings(cluster.Config{ClusterID: "late-svc", NodeID: "second", NATSURLs: []string{px.URL()}}), svc)
	winLate(t, px, leader, n)
	waitStarted(t, n, death)
	stop(t, n)
}

// waitStarted waits for the command to start: 10s, a hundred renewals.
func waitStarted(t *testing.T, n *cluster.Node, death *deathWatch) {
	t.Helper()
	select {
	case <-death.up:
	case <-time.After(10 * time.Second):
		t.Fatalf("the command did not start within 10s of a late tenure; the node leads: %v", n.IsLeader())
	}
}
