package proctest

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// get returns the status and body of a GET of url; 0 when it fails.
func get(url string) (int, string) {
	resp, err := http.Get(url) //nolint:noctx // a test's loopback request
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestAgentHTTP: the agent serves /healthz (the clusters' status as JSON)
// and /metrics (the library's series) on its listen address; --listen and
// $GO_CLUSTER_NODE_ID override the file.
func TestAgentHTTP(t *testing.T) {
	t.Parallel()
	natsBin, _ := binaries(t)
	ns := startNATS(t, natsBin)
	dir := t.TempDir()
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	// The node ID and the listen address come from the environment and a
	// flag, over the file's.
	conf := fmt.Sprintf("listen: 127.0.0.1:1\nclusters:\n  - name: agenthttp\n    connection: {servers: [%q]}\n    election: {node_id: file-id, lease_ttl: 1s}\n", ns.URL())
	file := filepath.Join(dir, "a.yaml")
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &runProc{node: "a", stderr: filepath.Join(t.TempDir(), "a.stderr"), exited: make(chan struct{})}
	startProc(t, p, []string{"GO_CLUSTER_NODE_ID=a"}, "agent", "--config", file, "--listen", addr)

	var body string
	natstest.WaitFor(t, 15*time.Second, func() bool {
		var code int
		code, body = get("http://" + addr + "/healthz")
		return code == http.StatusOK && strings.Contains(body, `"role":"PRIMARY"`)
	}, "/healthz never said the agent leads: %s", lazy(func() string { return body }))
	for _, want := range []string{`"cluster":"agenthttp"`, `"node":"a"`, `"leader":"a"`, `"ready":true`, `"running":true`} {
		if !strings.Contains(body, want) {
			t.Errorf("/healthz %s does not say %s", body, want)
		}
	}
	code, metrics := get("http://" + addr + "/metrics")
	if code != http.StatusOK || !strings.Contains(metrics, `gocluster_is_leader{cluster="agenthttp",node="a"} 1`) {
		t.Fatalf("/metrics %d does not show the leader:\n%.2000s", code, metrics)
	}
	p.signal(syscall.SIGTERM)
	if code := p.waitExit(t, 10*time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
}
