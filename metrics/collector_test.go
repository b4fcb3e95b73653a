package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/metrics"
)

// Without a bound node, the series follow the events alone, and the
// connection series are absent.
func TestEventsWithoutNode(t *testing.T) {
	m, err := metrics.New("orders", "node-1", metrics.WithNamespace("app"), metrics.WithConstLabels(prometheus.Labels{"region": "eu"}))
	if err != nil {
		t.Fatal(err)
	}
	m.ObserveLeader("node-1")
	m.ObserveLeadership(true, 7)
	m.ObserveElection("created", 0) // a new key: not recorded
	m.ObserveElection("expired", 1500*time.Millisecond)
	m.ObserveRenewal("ok", 2*time.Millisecond)
	m.ObserveRenewal("timeout", 3*time.Second)
	m.ObserveHook("OnBecomeLeader", time.Millisecond, nil)
	m.ObserveHook("OnLoseLeadership", time.Millisecond, errors.New("drain failed"))
	m.ObserveFencing(nil)
	m.ObserveFencing(fmt.Errorf("validate leadership: %w", cluster.ErrEpochMismatch))
	m.ObserveFencing(context.DeadlineExceeded)
	m.ObserveFencing(cluster.ErrStopped)
	m.ObserveStateWrite("ok")
	m.ObserveStateWrite("ok")
	m.ObserveStateWrite("fenced")

	const labels = `cluster="orders",node="node-1",region="eu"`
	expected := strings.ReplaceAll(`
# HELP app_is_leader 1 while this node holds a live tenure as leader, else 0.
# TYPE app_is_leader gauge
app_is_leader{$L} 1
# HELP app_epoch The lease epoch (fencing token): this node's while it leads, else the last one it saw; 0 if none.
# TYPE app_epoch gauge
app_epoch{$L} 7
# HELP app_leadership_transitions_total Times this node became leader (transition="acquired") or stopped leading (transition="lost").
# TYPE app_leadership_transitions_total counter
app_leadership_transitions_total{cluster="orders",node="node-1",region="eu",transition="acquired"} 1
app_leadership_transitions_total{cluster="orders",node="node-1",region="eu",transition="lost"} 0
# HELP app_renewals_total Lease renewals by this node while leading, by outcome (ok, conflict, timeout, error).
# TYPE app_renewals_total counter
app_renewals_total{cluster="orders",node="node-1",outcome="conflict",region="eu"} 0
app_renewals_total{cluster="orders",node="node-1",outcome="error",region="eu"} 0
app_renewals_total{cluster="orders",node="node-1",outcome="ok",region="eu"} 1
app_renewals_total{cluster="orders",node="node-1",outcome="timeout",region="eu"} 1
# HELP app_hook_errors_total Hook calls that returned an error or panicked, by hook.
# TYPE app_hook_errors_total counter
app_hook_errors_total{cluster="orders",hook="OnBecomeLeader",node="node-1",region="eu"} 0
app_hook_errors_total{cluster="orders",hook="OnLeaderChange",node="node-1",region="eu"} 0
app_hook_errors_total{cluster="orders",hook="OnLoseLeadership",node="node-1",region="eu"} 1
# HELP app_fencing_checks_total ValidateLeadership calls, by result (ok, not_leader, lease_expired, epoch_mismatch, canceled, error).
# TYPE app_fencing_checks_total counter
app_fencing_checks_total{cluster="orders",node="node-1",region="eu",result="canceled"} 1
app_fencing_checks_total{cluster="orders",node="node-1",region="eu",result="epoch_mismatch"} 1
app_fencing_checks_total{cluster="orders",node="node-1",region="eu",result="error"} 1
app_fencing_checks_total{cluster="orders",node="node-1",region="eu",result="lease_expired"} 0
app_fencing_checks_total{cluster="orders",node="node-1",region="eu",result="not_leader"} 0
app_fencing_checks_total{cluster="orders",node="node-1",region="eu",result="ok"} 1
# HELP app_state_writes_total Fenced state writes (State Put, Delete, Commit) by this node, by outcome (ok; fenced: the server refused a write of a tenure that had ended; not_leader: refused by the node itself; conflict: a Commit's Expect did not hold; uncertain: refused by a server behind the stream, may have landed; error).
# TYPE app_state_writes_total counter
app_state_writes_total{cluster="orders",node="node-1",outcome="conflict",region="eu"} 0
app_state_writes_total{cluster="orders",node="node-1",outcome="error",region="eu"} 0
app_state_writes_total{cluster="orders",node="node-1",outcome="fenced",region="eu"} 1
app_state_writes_total{cluster="orders",node="node-1",outcome="not_leader",region="eu"} 0
app_state_writes_total{cluster="orders",node="node-1",outcome="ok",region="eu"} 2
app_state_writes_total{cluster="orders",node="node-1",outcome="uncertain",region="eu"} 0
`, "$L", labels)
	if err := testutil.CollectAndCompare(m, strings.NewReader(expected),
		"app_is_leader", "app_epoch", "app_leadership_transitions_total", "app_renewals_total",
		"app_hook_errors_total", "app_fencing_checks_total", "app_state_writes_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(m, "app_election_wait_seconds"); n != 2 { // released, expired
		t.Errorf("election wait series = %d, want 2", n)
	}
	if n := testutil.CollectAndCount(m, "app_nats_connected", "app_nats_connection_state"); n != 0 {
		t.Errorf("connection series without a node = %d, want 0", n)
	}

	m.ObserveLeadership(false, 7)
	m.ObserveLeader("")
	after := strings.ReplaceAll(`
# HELP app_is_leader 1 while this node holds a live tenure as leader, else 0.
# TYPE app_is_leader gauge
app_is_leader{$L} 0
# HELP app_leader_known 1 while this node knows of a leader (itself or another node), 0 while nobody leads or it does not know yet.
# TYPE app_leader_known gauge
app_leader_known{$L} 0
`, "$L", labels)
	if err := testutil.CollectAndCompare(m, strings.NewReader(after), "app_is_leader", "app_leader_known"); err != nil {
		t.Errorf("after losing: %v", err)
	}
	problems, err := testutil.CollectAndLint(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

// The collectors of several nodes and clusters share one registry.
func TestCollectorsShareARegistry(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	for _, ids := range [][2]string{{"orders", "a"}, {"orders", "b"}, {"billing", "a"}} {
		m, err := metrics.New(ids[0], ids[1])
		if err != nil {
			t.Fatal(err)
		}
		if err := reg.Register(m); err != nil {
			t.Fatalf("register %v: %v", ids, err)
		}
	}
	n, err := testutil.GatherAndCount(reg, "gocluster_is_leader")
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Errorf("is_leader series = %d, want 3", n)
	}
	dup, _ := metrics.New("orders", "a")
	if err := reg.Register(dup); err == nil {
		t.Error("a second collector for the same node registered")
	}
}

func TestNewAndBindValidate(t *testing.T) {
	for _, tc := range []struct {
		name      string
		clusterID string
		nodeID    string
		opts      []metrics.Option
	}{
		{"empty cluster", "", "a", nil},
		{"bad node", "orders", "a..b", nil},
		{"dotted cluster", "db.example.com", "a", nil},
		{"bad namespace", "orders", "a", []metrics.Option{metrics.WithNamespace("1x")}},
		{"reserved label", "orders", "a", []metrics.Option{metrics.WithConstLabels(prometheus.Labels{"node": "x"})}},
		{"bad label", "orders", "a", []metrics.Option{metrics.WithConstLabels(prometheus.Labels{"__x": "y"})}},
	} {
		if _, err := metrics.New(tc.clusterID, tc.nodeID, tc.opts...); !errors.Is(err, metrics.ErrInvalidConfig) {
			t.Errorf("%s: New = %v, want ErrInvalidConfig", tc.name, err)
		}
	}
	m, err := metrics.New("orders", "a")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Bind(nil); !errors.Is(err, metrics.ErrInvalidConfig) {
		t.Errorf("Bind(nil) = %v", err)
	}
	other, err := cluster.NewNode(cluster.Config{ClusterID: "orders", NodeID: "b", NATSURLs: []string{"nats://127.0.0.1:1"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Bind(other); !errors.Is(err, metrics.ErrInvalidConfig) {
		t.Errorf("Bind(other node) = %v", err)
	}
	same, err := cluster.NewNode(cluster.Config{ClusterID: "orders", NodeID: "a", NATSURLs: []string{"nats://127.0.0.1:1"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Bind(same); err != nil {
		t.Errorf("Bind = %v", err)
	}
	// A bound node that has not started has no connection yet: no connection series.
	if n := testutil.CollectAndCount(m, "gocluster_nats_connected"); n != 0 {
		t.Errorf("connection series before Start = %d", n)
	}
	if m.ClusterID() != "orders" || m.NodeID() != "a" {
		t.Errorf("ids %s/%s", m.ClusterID(), m.NodeID())
	}
}

func TestFencingResult(t *testing.T) {
	for err, want := range map[error]string{
		nil:                  metrics.FencingOK,
		cluster.ErrNotLeader: metrics.FencingNotLeader,
		fmt.Errorf("x: %w", cluster.ErrLeaseExpired): metrics.FencingLeaseExpired,
		cluster.ErrEpochMismatch:                     metrics.FencingEpochMismatch,
		context.Canceled:                             metrics.FencingCanceled,
		cluster.ErrStopped:                           metrics.FencingError,
	} {
		if got := metrics.FencingResult(err); got != want {
			t.Errorf("FencingResult(%v) = %q, want %q", err, got, want)
		}
	}
}
