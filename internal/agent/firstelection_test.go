package agent

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// priorityTTL is the lease_ttl of the priority tests: short, for speed,
// and long enough for -race on a shared machine (at 1s, under a load of
// 10 on 2 cores, a leader starved now and then, and an agent started
// late by more than the first election's wait was not heard in time).
const priorityTTL = 2 * time.Second

// testAgent is an agent of the priority tests, in this process, on srv.
type testAgent struct {
	*Agent
	node    string
	leaders string // the file its become_leader command appends the cluster's name to
}

// startTestAgent starts an agent for node with one cluster per name, each
// with the given priority, checks and lease_ttl priorityTTL; it is
// stopped at cleanup.
func startTestAgent(t *testing.T, srv *natstest.Server, node string, prio int, names []string, checks []Check) *testAgent {
	t.Helper()
	leaders := filepath.Join(t.TempDir(), node+".leaders")
	cfg := &Config{}
	for _, name := range names {
		cfg.Clusters = append(cfg.Clusters, Cluster{Name: name,
			Election: Election{NodeID: node, LeaseTTL: Duration(priorityTTL), Priority: prio},
			Checks:   checks,
			Notify:   Notify{BecomeLeader: []string{"sh", "-c", `echo "$GO_CLUSTER_CLUSTER" >> ` + leaders}}})
	}
	connect := func(Cluster) (Endpoint, error) {
		return Endpoint{URLs: []string{srv.URL()}, Options: []nats.Option{nats.ReconnectWait(25 * time.Millisecond), nats.MaxReconnects(-1)}}, nil
	}
	ag, err := New(cfg, Options{Hostname: node, Connect: connect, Logger: testLog(node)})
	if err != nil {
		t.Fatal(err)
	}
	ag.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ag.Stop(ctx)
	})
	return &testAgent{Agent: ag, node: node, leaders: leaders}
}

// testLog is quiet unless GOCLUSTER_TEST_LOG is set.
func testLog(node string) *slog.Logger {
	if os.Getenv("GOCLUSTER_TEST_LOG") == "" {
		return quiet()
	}
	return slog.New(slog.NewTextHandler(os.Stderr, nil)).With("agent", node)
}

// leading reports whether the agent's node of cluster name leads.
func (a *testAgent) leading(name string) bool {
	a.mu.Lock()
	m := a.members[name]
	a.mu.Unlock()
	m.mu.Lock()
	node := m.node
	m.mu.Unlock()
	return node != nil && node.IsLeader()
}

// becameLeader is how many times the agent's node of cluster name became
// leader, as its become_leader notify command recorded.
func (a *testAgent) becameLeader(name string) int {
	n := 0
	for _, line := range strings.Split(readFile(a.leaders), "\n") {
		if line == name {
			n++
		}
	}
	return n
}

// clusterNames are n cluster names with prefix.
func clusterNames(prefix string, n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("%s-%d", prefix, i))
	}
	return out
}

// leaderOf waits until one of agents leads cluster name and returns it.
func leaderOf(t *testing.T, name string, agents ...*testAgent) *testAgent {
	t.Helper()
	var leader *testAgent
	natstest.WaitFor(t, 10*priorityTTL, func() bool {
		for _, a := range agents {
			if a.leading(name) {
				leader = a
				return true
			}
		}
		return false
	}, "nobody leads cluster %s", name)
	return leader
}

// TestHigherPriorityWinsTheFirstElection (issue 33, defect 5): two
// agents started together, priorities 100 and 90, on ten new buckets:
// in every cluster the first leader is the one of priority 100, and the
// lease never moves after it, at the start and again after a NATS
// outage. The lower one is started first, which on its own would make it
// win the race to the first lease.
func TestHigherPriorityWinsTheFirstElection(t *testing.T) {
	// Runs alone: it holds that the lease never moves for 1.5 lease_ttl, which a tenure lost to load would break.
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	names := clusterNames("fresh", 10)
	low := startTestAgent(t, srv, "low", 90, names, nil)
	high := startTestAgent(t, srv, "high", 100, names, nil)
	firstElectionIsTheHighest := func(phase string, want int) {
		t.Helper()
		for _, name := range names {
			if got := leaderOf(t, name, low, high); got != high {
				t.Errorf("%s: cluster %s: %s (priority 90) led first", phase, name, got.node)
			}
		}
		// Long enough for the higher one to take over from a lower
		// leader (it asks after a lease_ttl): nothing may move.
		until := time.Now().Add(priorityTTL + priorityTTL/2)
		natstest.WaitFor(t, 10*priorityTTL, func() bool {
			for _, name := range names {
				if !high.leading(name) {
					t.Fatalf("%s: cluster %s: the leader moved after the first election", phase, name)
				}
			}
			return time.Now().After(until)
		}, "%s: not held", phase)
		natstest.WaitFor(t, 5*time.Second, func() bool {
			for _, name := range names {
				if high.becameLeader(name) < want {
					return false
				}
			}
			return true
		}, "%s: the become_leader commands of the leader did not all run", phase)
		for _, name := range names {
			if n := low.becameLeader(name); n != 0 {
				t.Errorf("%s: cluster %s: the agent of priority 90 became leader %d time(s)", phase, name, n)
			}
			if n := high.becameLeader(name); n != want {
				t.Errorf("%s: cluster %s: the agent of priority 100 became leader %d time(s), want %d", phase, name, n, want)
			}
		}
	}
	firstElectionIsTheHighest("fresh start", 1)
	if t.Failed() {
		return
	}

	srv.Shutdown()
	natstest.WaitFor(t, 5*priorityTTL, func() bool {
		for _, name := range names {
			if high.leading(name) || low.leading(name) {
				return false
			}
		}
		return true
	}, "a leader kept leading with NATS down")
	srv.Restart(t)
	firstElectionIsTheHighest("after an outage", 2)
}
