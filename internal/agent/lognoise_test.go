package agent

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// logBuffer is a log the agent writes while the test reads it.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// count is the number of lines containing s.
func (b *logBuffer) count(s string) int {
	n := 0
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.Contains(l, s) {
			n++
		}
	}
	return n
}

// countLines is how many lines hold every one of parts.
func (b *logBuffer) countLines(parts ...string) int {
	n := 0
	for _, l := range strings.Split(b.String(), "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(l, p)
		}
		if all {
			n++
		}
	}
	return n
}

func (b *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// lineCount counts the lines of a file.
func lineCount(path string) int {
	b, _ := os.ReadFile(path)
	return strings.Count(string(b), "\n")
}

// TestCheckFailureAndRecoveryLoggedOnce: a check that fails, and passes
// again, is logged once each, however many intervals it spends failing or
// rising (counted by a second check that always passes); never "last
// result: <nil>". On main the node logged "readiness
// check failed ... failures=N" at every readiness interval while the check
// failed, each saying "check app failing (last result: <nil>)" while it
// was rising (issue 33, defect 9).
func TestCheckFailureAndRecoveryLoggedOnce(t *testing.T) {
	// Runs alone: it counts 50 ms check intervals, which load beside it would stretch.
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	dir := t.TempDir()
	ok, runs := filepath.Join(dir, "ok"), filepath.Join(dir, "runs")
	if err := os.WriteFile(ok, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Parse("agent.yaml", []byte(`clusters:
  - name: noise
    election: {node_id: n1, lease_ttl: 1s}
    checks:
      - name: app
        file: {path: `+ok+`}
        interval: 50ms
        fall: 2
        rise: 3
      - name: counter # counts the intervals; never fails for long enough to count
        exec: {shell: 'echo run >> `+runs+`'}
        interval: 50ms
        fall: 1000
        rise: 1
`))
	if err != nil {
		t.Fatal(err)
	}
	var log logBuffer
	a, err := New(cfg, Options{Logger: log.logger(),
		Connect: func(Cluster) (Endpoint, error) { return Endpoint{URLs: []string{srv.URL()}}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	a.Start()
	defer a.Stop(context.Background())
	status := func() ClusterStatus { return a.Status()[0] }
	natstest.WaitFor(t, 10*time.Second, func() bool { return status().Leader == "n1" }, "n1 did not lead: %+v", status())

	if err := os.Remove(ok); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 5*time.Second, func() bool { return !status().Ready }, "the check did not fail")
	failedAt := lineCount(runs)
	natstest.WaitFor(t, 10*time.Second, func() bool { return lineCount(runs) >= failedAt+20 }, "the check did not run 20 times more")
	if err := os.WriteFile(ok, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 10*time.Second, func() bool { return status().Ready }, "the check did not pass again: %+v", status())
	passedAt := lineCount(runs)
	natstest.WaitFor(t, 10*time.Second, func() bool { return lineCount(runs) >= passedAt+10 }, "the check did not run 10 times more")

	out := log.String()
	for _, tc := range []struct {
		line string
		want int
	}{
		{`msg="check failing" cluster=noise check=app`, 1},
		{`msg="check passes again" cluster=noise check=app`, 1},
		{`msg="not ready" cluster=noise reason="check app failing (last result: ` + ok + `: present false, want true)"`, 1},
		{`msg="readiness check failed"`, 0}, // said by the line above
		{"readiness check passes", 2},       // at the start, and once again
	} {
		if got := log.count(tc.line); got != tc.want {
			t.Errorf("%d lines with %q, want %d", got, tc.line, tc.want)
		}
	}
	if strings.Contains(out, "<nil>") {
		t.Errorf("a line says <nil>")
	}
	if t.Failed() {
		t.Logf("log:\n%s", out)
	}
}

// TestDuplicateNodeIDLoggedOnce: a second agent with a running one's
// node_id is refused (cluster.ErrDuplicateNodeID) at every attempt, and
// says so once, at ERROR, not at every attempt. On main it logged two
// ERROR lines every 2 s for ever (issue 33, defect 9).
func TestDuplicateNodeIDLoggedOnce(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	cfg, err := Parse("agent.yaml", []byte("clusters:\n  - name: twins\n    election: {node_id: same, lease_ttl: 1s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	connect := func(Cluster) (Endpoint, error) { return Endpoint{URLs: []string{srv.URL()}}, nil }
	first, err := New(cfg, Options{Logger: quiet(), Connect: connect})
	if err != nil {
		t.Fatal(err)
	}
	first.Start()
	defer first.Stop(context.Background())
	natstest.WaitFor(t, 10*time.Second, func() bool { return first.Status()[0].Leader == "same" }, "the first agent did not lead")

	connections := func() uint64 {
		v, err := srv.NATS().Varz(&server.VarzOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return v.TotalConnections
	}
	var log logBuffer
	second, err := New(cfg, Options{Logger: log.logger(), Connect: connect})
	if err != nil {
		t.Fatal(err)
	}
	before := connections()
	second.Start()
	defer second.Stop(context.Background())
	// Each attempt connects anew: three are three refusals.
	natstest.WaitFor(t, 20*time.Second, func() bool { return connections() >= before+3 }, "the second agent did not try three times")
	natstest.WaitFor(t, 5*time.Second, func() bool { return log.count("level=ERROR") >= 1 }, "the refusal was not logged")
	if got := log.count("level=ERROR"); got != 1 {
		t.Errorf("%d ERROR lines after three refused attempts, want 1:\n%s", got, log.String())
	}
	if !strings.Contains(log.String(), "NodeID used by another process") {
		t.Errorf("the refusal does not say why:\n%s", log.String())
	}
}
