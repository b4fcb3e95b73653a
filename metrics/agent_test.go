package metrics_test

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ozanturksever/go-cluster/metrics"
)

// agentSource is a fixed metrics.AgentSource.
type agentSource struct {
	checks []metrics.CheckState
	vips   []metrics.VIPState
}

func (s agentSource) CheckStates() []metrics.CheckState { return s.checks }
func (s agentSource) VIPStates() []metrics.VIPState     { return s.vips }

// TestAgentCollectorSeries: per check, per VIP and per notify command,
// with the values the source and the observations give.
func TestAgentCollectorSeries(t *testing.T) {
	added := time.Unix(1700000000, 500_000_000)
	src := agentSource{
		checks: []metrics.CheckState{{Name: "nginx", Passing: true, Took: 20 * time.Millisecond}, {Name: "db", Took: time.Second}},
		vips:   []metrics.VIPState{{Address: "10.0.0.100/24", Interface: "eth0", Held: true, Announcements: 4, LastAdded: added}},
	}
	c, err := metrics.NewAgentCollector("web", "web1.example.com", src)
	if err != nil {
		t.Fatal(err)
	}
	c.ObserveNotify("become_leader", 30*time.Millisecond, nil)
	c.ObserveNotify("state", 10*time.Millisecond, errors.New("exit status 1"))
	c.ObserveNotify("state", 10*time.Millisecond, nil)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	want := map[string]float64{
		`gocluster_agent_check_passing{check="db"}`:                                                0,
		`gocluster_agent_check_passing{check="nginx"}`:                                             1,
		`gocluster_agent_check_duration_seconds{check="db"}`:                                       1,
		`gocluster_agent_check_duration_seconds{check="nginx"}`:                                    0.02,
		`gocluster_agent_vip_held{interface="eth0",vip="10.0.0.100/24"}`:                           1,
		`gocluster_agent_vip_announcements_total{interface="eth0",vip="10.0.0.100/24"}`:            4,
		`gocluster_agent_vip_last_added_timestamp_seconds{interface="eth0",vip="10.0.0.100/24"}`:   1700000000.5,
		`gocluster_agent_vip_last_removed_timestamp_seconds{interface="eth0",vip="10.0.0.100/24"}`: 0,
		`gocluster_agent_notify_runs_total{command="become_leader"}`:                               1,
		`gocluster_agent_notify_runs_total{command="state"}`:                                       2,
		`gocluster_agent_notify_failures_total{command="become_leader"}`:                           0,
		`gocluster_agent_notify_failures_total{command="state"}`:                                   1,
	}
	got := gatherValues(t, reg, map[string]string{"cluster": "web", "node": "web1.example.com"})
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
	names := []string{"gocluster_agent_check_passing", "gocluster_agent_check_duration_seconds", "gocluster_agent_vip_held",
		"gocluster_agent_vip_announcements_total", "gocluster_agent_vip_last_added_timestamp_seconds",
		"gocluster_agent_vip_last_removed_timestamp_seconds", "gocluster_agent_notify_runs_total", "gocluster_agent_notify_failures_total"}
	if n, err := testutil.GatherAndCount(reg, "gocluster_agent_notify_duration_seconds"); err != nil || n != 2 {
		t.Fatalf("notify duration series: %d, %v; want 2", n, err)
	}
	if got := strings.Join(metrics.AgentNames(metrics.DefaultNamespace), " "); got != strings.Join(append(names, "gocluster_agent_notify_duration_seconds"), " ") {
		t.Fatalf("AgentNames: %s", got)
	}
}

// gatherValues is every gauge and counter of reg as "name{labels}" (the
// labels sorted, without those of common, which every series must have)
// to its value.
func gatherValues(t *testing.T, reg prometheus.Gatherer, common map[string]string) map[string]float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			var pairs []string
			seen := 0
			for _, lp := range m.GetLabel() {
				if v, ok := common[lp.GetName()]; ok {
					if v != lp.GetValue() {
						t.Errorf("%s: label %s=%q, want %q", f.GetName(), lp.GetName(), lp.GetValue(), v)
					}
					seen++
					continue
				}
				pairs = append(pairs, lp.GetName()+"="+strconv.Quote(lp.GetValue()))
			}
			if seen != len(common) {
				t.Errorf("%s: %d of the labels %v", f.GetName(), seen, common)
			}
			slices.Sort(pairs)
			key := f.GetName() + "{" + strings.Join(pairs, ",") + "}"
			switch {
			case m.Gauge != nil:
				out[key] = m.GetGauge().GetValue()
			case m.Counter != nil:
				out[key] = m.GetCounter().GetValue()
			}
		}
	}
	return out
}
