package agent

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/health"
	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// TestAgentPublishesChecksAndNotifyRuns: an agent's health replies (what
// `go-cluster status` lists) name its failing checks and the VIPs it
// holds, /healthz too, and /metrics has a series per check and per notify
// command (issue 33, defect 10).
func TestAgentPublishesChecksAndNotifyRuns(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	dir := t.TempDir()
	ok, soon := filepath.Join(dir, "ok"), filepath.Join(dir, "soon-absent")
	touch(t, ok)
	touch(t, soon)
	check := func(name, path string) Check {
		return Check{Name: name, File: &FileCheck{Path: path}, Interval: Duration(20 * time.Millisecond), Rise: 1, Fall: 1}
	}
	cfg := &Config{Clusters: []Cluster{{Name: "observe", Election: Election{NodeID: "web1.example.com", LeaseTTL: Duration(time.Second)},
		Checks: []Check{check("passes", ok), check("fails", soon)},
		Notify: Notify{LeaderChange: []string{"true"}, State: []string{"false"}}}}}
	a, err := New(cfg, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Connect: func(Cluster) (Endpoint, error) { return Endpoint{URLs: []string{srv.URL()}}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	a.Start()
	defer a.Stop(t.Context())
	natstest.WaitFor(t, 10*time.Second, func() bool { return a.Status()[0].Role == "PRIMARY" }, "never led")
	if err := os.Remove(soon); err != nil {
		t.Fatal(err)
	}

	nc := srv.Connect(t)
	hc, err := health.NewClient(nc, "observe")
	if err != nil {
		t.Fatal(err)
	}
	var resp health.Response
	natstest.WaitFor(t, 10*time.Second, func() bool {
		resp, err = hc.QueryNode(t.Context(), "web1.example.com", time.Second)
		return err == nil && resp.Custom[CustomFailingChecks] != nil && len(resp.Custom[CustomFailingChecks].([]any)) > 0
	}, "the health reply does not name the failing check: %+v, %v", resp, err)
	if got := resp.Custom[CustomFailingChecks].([]any); len(got) != 1 || got[0] != "fails" {
		t.Errorf("failing checks %v, want [fails]", got)
	}
	if got, isList := resp.Custom[CustomVIPs].([]any); !isList || len(got) != 0 {
		t.Errorf("vips %v, want an empty list (no VIP configured)", resp.Custom[CustomVIPs])
	}
	st := a.Status()[0]
	if strings.Join(st.FailingChecks, ",") != "fails" || st.VIPs == nil || len(st.VIPs) != 0 {
		t.Errorf("/healthz: failing checks %q, vips %q", st.FailingChecks, st.VIPs)
	}

	web := httptest.NewServer(a.Handler())
	defer web.Close()
	var body string
	natstest.WaitFor(t, 10*time.Second, func() bool {
		body = get(t, web.URL+"/metrics")
		// notify.state's command, false, fails every run: MASTER, then FAULT.
		runs := seriesValue(body, `gocluster_agent_notify_runs_total{cluster="observe",command="state",node="web1.example.com"}`)
		return runs == "2" && seriesValue(body, `gocluster_agent_notify_failures_total{cluster="observe",command="state",node="web1.example.com"}`) == runs
	}, "/metrics has no notify series: %s", lazyText{&body})
	for _, want := range []string{
		`gocluster_agent_check_passing{check="fails",cluster="observe",node="web1.example.com"} 0`,
		`gocluster_agent_check_passing{check="passes",cluster="observe",node="web1.example.com"} 1`,
		`gocluster_agent_check_duration_seconds{check="passes",cluster="observe",node="web1.example.com"}`,
		`gocluster_agent_notify_runs_total{cluster="observe",command="leader_change",node="web1.example.com"}`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics has no %s", want)
		}
	}
}

// seriesValue is the value of series in a scrape; "" if absent.
func seriesValue(scrape, series string) string {
	for _, l := range strings.Split(scrape, "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			return v
		}
	}
	return ""
}

func get(t *testing.T, url string) string {
	resp, err := http.Get(url) //nolint:noctx // a test's loopback request
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// lazyText formats as the string it points to, when formatted.
type lazyText struct{ s *string }

func (l lazyText) String() string { return *l.s }
