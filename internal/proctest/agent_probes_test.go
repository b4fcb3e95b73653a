package proctest

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// TestAgentLivezAndReadyzSayWhatProbesRead (issue 41, item 1): the built
// agent serves /livez and /readyz with the library's meaning
// (cluster.Node.HealthzHandler), per cluster (/livez/NAME, /readyz/NAME)
// and for all clusters together: 200 "ok", or 503 with the reason. A
// cluster whose check fails is not ready, and neither are all clusters
// together, while /healthz, which says whether the nodes run, stays 200
// with its JSON; a cluster that has lost NATS is not ready either. Load
// balancers and Kubernetes read the status code, not the body.
func TestAgentLivezAndReadyzSayWhatProbesRead(t *testing.T) {
	t.Parallel()
	natsBin, _ := binaries(t)
	ns := startNATS(t, natsBin)
	dir := t.TempDir()
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	fail := filepath.Join(dir, "fail")
	if err := os.WriteFile(fail, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf(`listen: %s
clusters:
  - name: probesgood
    connection: {servers: [%q]}
    election: {node_id: a, lease_ttl: 1s}
  - name: probesbad
    connection: {servers: [%q]}
    election: {node_id: a, lease_ttl: 1s}
    checks:
      - name: app
        exec: {shell: "test ! -e %s"}
        interval: 100ms
        timeout: 90ms
`, addr, ns.URL(), ns.URL(), fail)
	file := filepath.Join(dir, "a.yaml")
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &runProc{node: "a", stderr: filepath.Join(t.TempDir(), "a.stderr"), exited: make(chan struct{})}
	startProc(t, p, nil, "agent", "--config", file)
	base := "http://" + addr

	var code int
	var body string
	probe := func(path string) (int, string) { code, body = get(base + path); return code, body }
	natstest.WaitFor(t, 15*time.Second, func() bool {
		c, b := probe("/healthz")
		return c == http.StatusOK && strings.Contains(b, `"cluster":"probesgood","node":"a","running":true,"role":"PRIMARY"`)
	}, "probesgood never led: /healthz %s %s", lazy(func() string { return fmt.Sprint(code) }), lazy(func() string { return body }))

	// A check failing: that cluster is not ready, and all together are not.
	want := []struct {
		path string
		code int
		says string
	}{
		{"/readyz/probesgood", http.StatusOK, "ok"},
		{"/livez/probesgood", http.StatusOK, "ok"},
		{"/readyz/probesbad", http.StatusServiceUnavailable, "not ready: "},
		{"/livez/probesbad", http.StatusOK, "ok"},
		{"/readyz", http.StatusServiceUnavailable, "probesbad: not ready: "},
		{"/livez", http.StatusOK, "ok"},
		{"/readyz/nosuchcluster", http.StatusNotFound, ""},
	}
	for _, w := range want {
		natstest.WaitFor(t, 5*time.Second, func() bool {
			c, b := probe(w.path)
			return c == w.code && strings.Contains(b, w.says)
		}, "GET %s: %s %q; want %d with %q", w.path, lazy(func() string { return fmt.Sprint(code) }), lazy(func() string { return body }), w.code, w.says)
	}
	if c, b := probe("/readyz/probesbad"); !strings.Contains(b, "check app failing") {
		t.Errorf("GET /readyz/probesbad: %d %q; want the reason (check app failing)", c, b)
	}
	if c, b := probe("/healthz"); c != http.StatusOK || !strings.Contains(b, `"ready":false`) {
		t.Errorf("GET /healthz with a cluster running but not ready: %d %s; want 200 (every node runs) with its JSON", c, b)
	}

	// The check passing again: everything ready.
	if err := os.Remove(fail); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 10*time.Second, func() bool { c, b := probe("/readyz"); return c == http.StatusOK && strings.TrimSpace(b) == "ok" },
		"GET /readyz once every check passes: %s %q; want 200 ok", lazy(func() string { return fmt.Sprint(code) }), lazy(func() string { return body }))

	// NATS lost: not ready, with the reason.
	ns.stop(syscall.SIGKILL)
	natstest.WaitFor(t, 10*time.Second, func() bool {
		c, b := probe("/readyz/probesgood")
		return c == http.StatusServiceUnavailable && strings.Contains(b, "NATS connection lost")
	}, "GET /readyz/probesgood with NATS lost: %s %q; want 503 saying NATS is lost", lazy(func() string { return fmt.Sprint(code) }), lazy(func() string { return body }))
	if c, b := probe("/readyz"); c != http.StatusServiceUnavailable || !strings.Contains(b, "probesgood: not ready: ") {
		t.Errorf("GET /readyz with NATS lost: %d %q; want 503 naming probesgood", c, b)
	}
	p.signal(syscall.SIGTERM)
	if code := p.waitExit(t, 10*time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
}
