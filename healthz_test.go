package cluster

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// healthzServer serves n's HealthzHandler on a loopback HTTP server that
// is closed at the end of the test.
func healthzServer(t *testing.T, n *Node) *httptest.Server {
	t.Helper()
	hs := httptest.NewServer(n.HealthzHandler())
	t.Cleanup(hs.Close)
	return hs
}

// probe GETs path and returns the status and the body.
func probe(t *testing.T, hs *httptest.Server, path string) (int, string) {
	t.Helper()
	status, body, _ := probeHeader(t, hs, path)
	return status, body
}

// probeHeader GETs path and returns the status, the body and the header.
func probeHeader(t *testing.T, hs *httptest.Server, path string) (int, string, http.Header) {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(c, http.MethodGet, hs.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hs.Client().Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return resp.StatusCode, string(body), resp.Header
}

// wantProbe checks one probe's status and that its body contains want.
func wantProbe(t *testing.T, hs *httptest.Server, path string, status int, want string) {
	t.Helper()
	got, body := probe(t, hs, path)
	if got != status || !strings.Contains(body, want) {
		t.Errorf("GET %s = %d %q, want %d containing %q", path, got, body, status, want)
	}
}

// A leader is live and ready; a node not started yet is live but not
// ready; a stopped one is neither.
func TestHealthzLeaderLiveAndReady(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	a := startNode(t, stableConfig(id, "a", srv.URL()), rec, nil)
	waitOneLeader(t, []*Node{a}, 15*time.Second)
	hs := healthzServer(t, a)
	wantProbe(t, hs, "/livez", http.StatusOK, "ok")
	wantProbe(t, hs, "/readyz", http.StatusOK, "ok")
	wantProbe(t, hs, "/healthz/livez", http.StatusOK, "ok") // under a prefix
	wantProbe(t, hs, "/other", http.StatusNotFound, "")
	if _, _, h := probeHeader(t, hs, "/livez"); !strings.HasPrefix(h.Get("Content-Type"), "text/plain") {
		t.Errorf("Content-Type = %q, want text/plain", h.Get("Content-Type"))
	}

	b, err := NewNode(stableConfig(id, "b", srv.URL()), nil)
	if err != nil {
		t.Fatal(err)
	}
	bs := healthzServer(t, b)
	wantProbe(t, bs, "/livez", http.StatusOK, "ok")
	wantProbe(t, bs, "/readyz", http.StatusServiceUnavailable, "not ready: "+ErrNotStarted.Error())

	stopNode(t, a)
	wantProbe(t, hs, "/livez", http.StatusServiceUnavailable, "not live: "+ErrStopped.Error())
	wantProbe(t, hs, "/readyz", http.StatusServiceUnavailable, "not ready: "+ErrStopped.Error())
	rec.check(t)
}

// A node whose ReadinessCheck fails is live but not ready, and the body
// says why.
func TestHealthzFailingReadinessCheckNotReady(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	cfg := testConfig(id, "a", srv.URL())
	cfg.ReadinessCheck = func(context.Context) error { return errors.New("database unreachable") }
	cfg.ReadinessInterval = 50 * time.Millisecond
	a := startNode(t, cfg, rec, nil)
	hs := healthzServer(t, a)
	natstest.WaitFor(t, 5*time.Second, func() bool {
		_, body := probe(t, hs, "/readyz")
		return strings.Contains(body, "database unreachable")
	}, "readyz never reported the failing check")
	wantProbe(t, hs, "/readyz", http.StatusServiceUnavailable, "not ready: "+ErrNotReady.Error())
	wantProbe(t, hs, "/livez", http.StatusOK, "ok")
	if a.IsLeader() {
		t.Error("a node that never passed its readiness check leads")
	}
	rec.check(t)
}

// A leader cut off from NATS is reported not live while it still leads,
// before its deadline; once its tenure has ended it follows and is live.
func TestHealthzCutLeaderNotLiveBeforeDeadline(t *testing.T) {
	// Side by side with others: a LeaseTTL of 4s opens a window of about
	// 2s between "no renewal for RenewInterval+RequestTimeout" (1.5s) and
	// the deadline (3.6s), where testConfig's 2s left 300ms.
	t.Parallel()
	srv, rec, id := setup(t)
	cfg := testConfig(id, "a", srv.URL())
	cfg.LeaseTTL = 4 * time.Second
	a, proxy := proxiedNode(t, srv, cfg, rec)
	waitOneLeader(t, []*Node{a}, 15*time.Second)
	hs := healthzServer(t, a)
	wantProbe(t, hs, "/livez", http.StatusOK, "ok")

	proxy.Blackhole()
	cut := time.Now()
	// The deadline is LeaseTTL - SafetyMargin after the last successful
	// renewal was sent, which was before the cut.
	deadline := cut.Add(a.cfg.LeaseTTL - a.cfg.SafetyMargin)
	natstest.WaitFor(t, time.Until(deadline), func() bool {
		got, body := probe(t, hs, "/livez")
		return got == http.StatusServiceUnavailable && strings.Contains(body, "no renewal has succeeded")
	}, "a leader cut off for %v was still live at its deadline", a.cfg.LeaseTTL-a.cfg.SafetyMargin)

	natstest.WaitFor(t, 5*time.Second, func() bool { return !a.IsLeader() }, "the cut-off leader never demoted itself")
	wantProbe(t, hs, "/livez", http.StatusOK, "ok")
	proxy.Restore()
	rec.check(t)
}
