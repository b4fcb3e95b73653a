package proctest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// TestAgentNATSOutageLoggedOnceAndHealthzHonest: the built agent against
// a nats-server process that is killed and started again (issue 33,
// defect 4): each agent logs the loss and the return once, the return
// with how long NATS was lost; meanwhile the follower's /healthz says
// nats lost, no leader and not ready.
func TestAgentNATSOutageLoggedOnceAndHealthzHonest(t *testing.T) {
	t.Parallel()
	natsBin, _ := binaries(t)
	ns := startNATS(t, natsBin)
	dir := t.TempDir()
	agents, listen := map[string]*runProc{}, map[string]string{}
	for _, id := range []string{"a", "b"} {
		listen[id] = fmt.Sprintf("127.0.0.1:%d", freePort(t))
		conf := fmt.Sprintf("listen: %s\nclusters:\n  - name: agentoutage\n    connection: {servers: [%q]}\n    election: {node_id: %s, lease_ttl: 1s}\n",
			listen[id], ns.URL(), id)
		file := filepath.Join(dir, id+".yaml")
		if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		p := &runProc{node: id, stderr: filepath.Join(t.TempDir(), id+".stderr"), exited: make(chan struct{})}
		startProc(t, p, nil, "agent", "--config", file)
		agents[id] = p
		if id == "a" {
			natstest.WaitFor(t, 15*time.Second, func() bool {
				_, b := get("http://" + listen["a"] + "/healthz")
				return strings.Contains(b, `"role":"PRIMARY"`)
			}, "a never led")
		}
	}
	var body string
	healthz := func(id string) string { _, body = get("http://" + listen[id] + "/healthz"); return body }
	natstest.WaitFor(t, 10*time.Second, func() bool { return strings.Contains(healthz("b"), `"leader":"a"`) }, "b never followed a: %s", lazy(func() string { return body }))

	ns.stop(syscall.SIGKILL)
	natstest.WaitFor(t, 10*time.Second, func() bool { return strings.Contains(healthz("b"), `"nats":"lost"`) }, "b's /healthz never said NATS is lost: %s", lazy(func() string { return body }))
	for _, want := range []string{`"leader":""`, `"ready":false`, `NATS connection lost`} {
		if !strings.Contains(body, want) {
			t.Errorf("b's /healthz while NATS is lost does not say %s: %s", want, body)
		}
	}
	ns.start(t)
	for id, p := range agents {
		natstest.WaitFor(t, 15*time.Second, func() bool { return p.logged("NATS connection back") }, "%s never logged NATS back", id)
		log := readFile(p.stderr)
		if n := strings.Count(log, "NATS connection lost"); n != 1 {
			t.Errorf("%s logged the loss %d times, want once:\n%s", id, n, log)
		}
		if n := strings.Count(log, `msg="NATS connection back"`); n != 1 || !strings.Contains(log, " after=") {
			t.Errorf("%s logged NATS back %d times, want once with after=:\n%s", id, n, log)
		}
	}
	natstest.WaitFor(t, 15*time.Second, func() bool { return strings.Contains(healthz("b"), `"nats":"connected"`) }, "b's /healthz after NATS came back: %s", lazy(func() string { return body }))
}
