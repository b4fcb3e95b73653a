package metrics_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	cluster "github.com/ozanturksever/go-cluster"
)

// families is one scrape, by metric name.
type families map[string]*dto.MetricFamily

// scrape GETs url in the Prometheus text format and parses it.
func scrape(t testing.TB, url string) families {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("scrape %s: %s: %s", url, resp.Status, body)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse scrape: %v", err)
	}
	return fams
}

// value returns the value of the series name{labels...} (label pairs as
// name, value, ...): a counter's or gauge's value, or a histogram's sample
// count. ok is false when there is no such series.
func (f families) value(name string, labels ...string) (v float64, ok bool) {
	fam := f[name]
	if fam == nil {
		return 0, false
	}
	for _, m := range fam.GetMetric() {
		if !hasLabels(m, labels) {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

// sum returns a histogram's sample sum.
func (f families) sum(name string, labels ...string) float64 {
	for _, m := range f[name].GetMetric() {
		if hasLabels(m, labels) && m.Histogram != nil {
			return m.GetHistogram().GetSampleSum()
		}
	}
	return 0
}

func hasLabels(m *dto.Metric, pairs []string) bool {
	for i := 0; i+1 < len(pairs); i += 2 {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == pairs[i] && l.GetValue() == pairs[i+1] {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// testLogger discards logs unless GOCLUSTER_TEST_LOG is set.
func testLogger() *slog.Logger {
	if os.Getenv("GOCLUSTER_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// nodeConfig is a lease long enough to ride out a loaded machine under -race.
func nodeConfig(clusterID, nodeID, url string, obs cluster.Metrics) cluster.Config {
	return cluster.Config{
		ClusterID: clusterID, NodeID: nodeID, NATSURLs: []string{url},
		LeaseTTL: 3 * time.Second, RenewInterval: 750 * time.Millisecond,
		Metrics: obs, Logger: testLogger(),
	}
}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}
