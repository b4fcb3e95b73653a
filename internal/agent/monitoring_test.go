package agent

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.yaml.in/yaml/v3"
)

// The files of packaging/monitoring: a Grafana dashboard and Prometheus
// alerting rules, for the series an agent exports.
const (
	dashboardFile = "../../packaging/monitoring/go-cluster-dashboard.json"
	alertsFile    = "../../packaging/monitoring/go-cluster-alerts.yaml"
)

// exportedNames are the names of every series an agent's cluster
// exports, from the collectors' descriptions (with a histogram's
// _bucket, _sum and _count).
func exportedNames(t *testing.T) map[string]bool {
	t.Helper()
	cfg := &Config{Clusters: []Cluster{{Name: "dash", Election: Election{NodeID: "a", LeaseTTL: Duration(2e9)},
		Checks: []Check{{Name: "c", File: &FileCheck{Path: "/nonexistent"}}},
		VIPs:   []VIP{{Address: "192.0.2.10/24", Interface: "eth9"}},
		Notify: Notify{State: []string{"true"}}}}}
	a, err := New(cfg, Options{Logger: quiet(), Connect: func(Cluster) (Endpoint, error) { return Endpoint{}, nil }})
	if err != nil {
		t.Skipf("no agent to describe here: %v", err) // VIPs need Linux
	}
	defer a.Stop(t.Context())
	fq := regexp.MustCompile(`fqName: "([^"]+)"`)
	names := map[string]bool{}
	for _, m := range a.members {
		ch := make(chan *prometheus.Desc, 100)
		for _, c := range []prometheus.Collector{m.metrics, m.agentMetrics} {
			c.Describe(ch)
		}
		close(ch)
		for d := range ch {
			n := fq.FindStringSubmatch(d.String())[1]
			for _, suffix := range []string{"", "_bucket", "_sum", "_count"} {
				names[n+suffix] = true
			}
		}
	}
	return names
}

// seriesIn are the go-cluster series names an expression refers to.
func seriesIn(expr string) []string {
	return regexp.MustCompile(`\bgocluster_[a-zA-Z0-9_]+`).FindAllString(expr, -1)
}

// dashboardPanel is what the test reads of a Grafana panel.
type dashboardPanel struct {
	ID      int                `json:"id"`
	GridPos struct{ X, W int } `json:"gridPos"`
	Type    string             `json:"type"`
	Title   string             `json:"title"`
	Panels  []dashboardPanel   `json:"panels"` // a row's, when collapsed
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

// dashboardExprs reads the dashboard (it must be a JSON object with a
// uid, a title and panels) and returns every panel's expressions by
// panel title.
func dashboardExprs(t *testing.T) map[string][]string {
	t.Helper()
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		UID        string           `json:"uid"`
		Title      string           `json:"title"`
		Panels     []dashboardPanel `json:"panels"`
		Templating struct {
			List []struct {
				Name string `json:"name"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	if d.UID == "" || d.Title == "" || len(d.Panels) == 0 {
		t.Fatalf("%s: uid %q, title %q, %d panels", dashboardFile, d.UID, d.Title, len(d.Panels))
	}
	vars := []string{}
	for _, v := range d.Templating.List {
		vars = append(vars, v.Name)
	}
	out := map[string][]string{}
	ids := map[int]bool{}
	var walk func([]dashboardPanel)
	walk = func(ps []dashboardPanel) {
		for _, p := range ps {
			if p.ID == 0 || ids[p.ID] {
				t.Errorf("panel %q: id %d is missing or not unique", p.Title, p.ID)
			}
			ids[p.ID] = true
			if p.GridPos.W <= 0 || p.GridPos.X < 0 || p.GridPos.X+p.GridPos.W > 24 {
				t.Errorf("panel %q: gridPos x %d, w %d is outside Grafana's 24 columns", p.Title, p.GridPos.X, p.GridPos.W)
			}
			if p.Type == "row" {
				walk(p.Panels)
				continue
			}
			if len(p.Targets) == 0 {
				t.Errorf("panel %q has no query", p.Title)
			}
			for _, tg := range p.Targets {
				out[p.Title] = append(out[p.Title], tg.Expr)
				for _, v := range regexp.MustCompile(`\$(\w+)`).FindAllStringSubmatch(tg.Expr, -1) {
					if !strings.HasPrefix(v[1], "__") && !slices.Contains(vars, v[1]) {
						t.Errorf("panel %q: $%s is not a variable of the dashboard (%v)", p.Title, v[1], vars)
					}
				}
			}
		}
	}
	walk(d.Panels)
	return out
}

// alertExprs reads the alerting rules: alert name to expression.
func alertExprs(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(data, &f); err != nil {
		t.Fatalf("%s: %v", alertsFile, err)
	}
	out := map[string]string{}
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			out[r.Alert] = r.Expr
		}
	}
	return out
}

// TestMonitoringFilesUseExportedSeries: every expression of the Grafana
// dashboard and of the alerting rules refers to go-cluster series, and
// only to series an agent exports; the alerts asked for are there.
func TestMonitoringFilesUseExportedSeries(t *testing.T) {
	names := exportedNames(t)
	check := func(where, expr string) {
		found := seriesIn(expr)
		if len(found) == 0 {
			t.Errorf("%s: %q refers to no go-cluster series", where, expr)
		}
		for _, n := range found {
			if !names[n] {
				t.Errorf("%s: %s is not a series the agent exports", where, n)
			}
		}
	}
	for title, exprs := range dashboardExprs(t) {
		for _, e := range exprs {
			check("dashboard panel "+title, e)
		}
	}
	alerts := alertExprs(t)
	for name, e := range alerts {
		check("alert "+name, e)
	}
	for _, want := range []string{"GoClusterNoLeader", "GoClusterVIPHeldTwice", "GoClusterVIPNotHeld", "GoClusterNATSLost"} {
		if _, ok := alerts[want]; !ok {
			t.Errorf("no alert %s in %s", want, alertsFile)
		}
	}
}

// TestDashboardQueriesParse: the dashboard's queries, their Grafana
// variables replaced, are valid PromQL: promtool checks them as
// recording rules. Needs promtool (Debian's prometheus package; .ci/run
// installs it): skipped without it, failed with CI set.
func TestDashboardQueriesParse(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("promtool is not installed (apt-get install prometheus)")
		}
		t.Skip("promtool is not installed (apt-get install prometheus)")
	}
	vars := strings.NewReplacer("$__rate_interval", "1m", "$cluster", ".*")
	var b strings.Builder
	b.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	i := 0
	for _, exprs := range dashboardExprs(t) {
		for _, e := range exprs {
			i++
			q, _ := json.Marshal(vars.Replace(e)) // a JSON string is a YAML string
			b.WriteString("      - record: dashboard:query" + strings.Repeat("x", i) + "\n        expr: " + string(q) + "\n")
		}
	}
	file := filepath.Join(t.TempDir(), "dashboard-rules.yaml")
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "check", "rules", file).CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules: %v\n%s\n%s", err, out, b.String())
	}
}
