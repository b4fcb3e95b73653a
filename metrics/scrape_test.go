package metrics_test

import (
	"errors"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/metrics"
)

// Two nodes share one registry, scraped over HTTP like Prometheus does:
// the series follow leadership from one node to the other.
func TestScrapeFollowsLeadership(t *testing.T) {
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	reg := prometheus.NewRegistry()
	web := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}))
	t.Cleanup(web.Close)
	const id = "metrics"

	start := func(nodeID string) *cluster.Node {
		m, err := metrics.New(id, nodeID)
		if err != nil {
			t.Fatal(err)
		}
		n, err := cluster.NewNode(nodeConfig(id, nodeID, srv.URL(), m), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Bind(n); err != nil {
			t.Fatal(err)
		}
		reg.MustRegister(m)
		if err := n.Start(ctx(t)); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := n.Stop(ctx(t)); err != nil {
				t.Errorf("stop %s: %v", nodeID, err)
			}
		})
		return n
	}
	a := start("a")
	natstest.WaitFor(t, 10*time.Second, a.IsLeader, "a did not become leader")
	b := start("b")
	natstest.WaitFor(t, 10*time.Second, func() bool { return b.Leader() == "a" }, "b did not see a lead")

	// want waits until every expectation holds in one scrape, and reports
	// the ones that do not at the deadline.
	type expect struct {
		name   string
		labels []string
		ok     func(float64) bool
		what   string
	}
	eq := func(v float64) (func(float64) bool, string) {
		return func(x float64) bool { return x == v }, "== " + trim(v)
	}
	atLeast := func(v float64) (func(float64) bool, string) {
		return func(x float64) bool { return x >= v }, ">= " + trim(v)
	}
	series := func(name string, cond func(float64) (func(float64) bool, string), v float64, labels ...string) expect {
		ok, what := cond(v)
		return expect{name: name, labels: labels, ok: ok, what: what}
	}
	want := func(step string, exps ...expect) families {
		t.Helper()
		var fams families
		failing := func() []string {
			var bad []string
			for _, e := range exps {
				v, found := fams.value(e.name, e.labels...)
				if !found || !e.ok(v) {
					bad = append(bad, e.name+trimLabels(e.labels)+" = "+trim(v)+", want "+e.what)
				}
			}
			return bad
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			fams = scrape(t, web.URL)
			bad := failing()
			if len(bad) == 0 {
				return fams
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %v", step, bad)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	// a leads, at the bucket's first epoch (its creation time in µs).
	first, err := a.ValidateLeadership(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.ValidateLeadership(ctx(t)); !errors.Is(err, cluster.ErrNotLeader) {
		t.Fatalf("b.ValidateLeadership = %v, want ErrNotLeader", err)
	}
	want("a leads",
		series("gocluster_is_leader", eq, 1, "node", "a", "cluster", id),
		series("gocluster_is_leader", eq, 0, "node", "b"),
		series("gocluster_epoch", eq, float64(first), "node", "a"),
		series("gocluster_epoch", eq, float64(first), "node", "b"),
		series("gocluster_leader_known", eq, 1, "node", "b"),
		series("gocluster_leadership_transitions_total", eq, 1, "node", "a", "transition", "acquired"),
		series("gocluster_leadership_transitions_total", eq, 0, "node", "a", "transition", "lost"),
		series("gocluster_leadership_transitions_total", eq, 0, "node", "b", "transition", "acquired"),
		series("gocluster_renewals_total", atLeast, 1, "node", "a", "outcome", "ok"),
		series("gocluster_renewals_total", eq, 0, "node", "b", "outcome", "ok"),
		series("gocluster_renewal_duration_seconds", atLeast, 1, "node", "a"),
		series("gocluster_hook_duration_seconds", eq, 1, "node", "a", "hook", "OnBecomeLeader"),
		series("gocluster_hook_errors_total", eq, 0, "node", "a", "hook", "OnBecomeLeader"),
		series("gocluster_fencing_checks_total", eq, 1, "node", "a", "result", "ok"),
		series("gocluster_fencing_checks_total", eq, 1, "node", "b", "result", "not_leader"),
		series("gocluster_nats_connected", eq, 1, "node", "a"),
		series("gocluster_nats_connection_state", eq, 1, "node", "b", "state", "connected"),
		series("gocluster_nats_connection_state", eq, 0, "node", "b", "state", "reconnecting"),
		series("gocluster_nats_reconnects_total", eq, 0, "node", "a"),
		series("gocluster_election_wait_seconds", eq, 0, "node", "a", "cause", "released"), // a created the key: nothing to measure
	)

	// The handover: a steps down, b takes over.
	if err := a.StepDown(ctx(t)); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 10*time.Second, b.IsLeader, "b did not take over")
	fams := want("b leads",
		series("gocluster_is_leader", eq, 0, "node", "a"),
		series("gocluster_is_leader", eq, 1, "node", "b"),
		series("gocluster_epoch", eq, float64(first+1), "node", "a"),
		series("gocluster_epoch", eq, float64(first+1), "node", "b"),
		series("gocluster_leadership_transitions_total", eq, 1, "node", "a", "transition", "lost"),
		series("gocluster_leadership_transitions_total", eq, 1, "node", "b", "transition", "acquired"),
		series("gocluster_hook_duration_seconds", eq, 1, "node", "a", "hook", "OnLoseLeadership"),
		series("gocluster_election_wait_seconds", eq, 1, "node", "b", "cause", "released"),
		series("gocluster_renewals_total", atLeast, 1, "node", "b", "outcome", "ok"),
		// a: a, then b (and, as a rule, none in between).
		series("gocluster_leader_changes_total", atLeast, 2, "node", "a"),
		series("gocluster_leader_known", eq, 1, "node", "a"),
	)
	// A graceful handover is quick: b waited well under a LeaseTTL.
	if wait := fams.sum("gocluster_election_wait_seconds", "node", "b", "cause", "released"); wait <= 0 || wait >= 3 {
		t.Errorf("b's election wait = %gs, want in (0, LeaseTTL)", wait)
	}
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

func trim(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func trimLabels(l []string) string {
	s := "{"
	for i := 0; i+1 < len(l); i += 2 {
		if i > 0 {
			s += ","
		}
		s += l[i] + "=" + l[i+1]
	}
	return s + "}"
}
