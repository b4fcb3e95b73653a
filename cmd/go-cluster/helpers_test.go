package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/health"
	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// buildCLI returns the path of the command built once for the package's
// tests (the first caller builds it; the binary is read-only from then on,
// so tests side by side share it).
func buildCLI(t *testing.T) string {
	t.Helper()
	cli.once.Do(func() { cli.bin, cli.err = buildCLIInto(cli.dir) })
	if cli.err != nil {
		t.Fatal(cli.err)
	}
	return cli.bin
}

// cli is the command built once for the package's tests, in a directory
// TestMain makes and removes.
var cli struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// buildCLIInto builds the command into dir and returns the binary's path.
func buildCLIInto(dir string) (string, error) {
	gotool, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("the go tool is needed to build the CLI: %w", err)
	}
	bin := filepath.Join(dir, "go-cluster")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, gotool, "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %w\n%s", err, out)
	}
	return bin, nil
}

// result is what one run of the CLI did.
type result struct {
	stdout, stderr string
	code           int
}

// runCLI runs the binary with args and env (NAME=value) and waits for it,
// at most a minute. The connection settings of this process's
// environment are left out, and the nats CLI's configuration is an empty
// directory, unless env sets them.
func runCLI(t *testing.T, bin string, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = cliEnv(t, env)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	default:
		t.Fatalf("run %v: %v", args, err)
	}
	return r
}

// cliEnv is this process's environment without the variables the CLI
// reads for its connection, with XDG_CONFIG_HOME an empty directory (so
// that no context of the machine's is selected), plus env.
func cliEnv(t *testing.T, env []string) []string {
	out := []string{"XDG_CONFIG_HOME=" + t.TempDir()}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "NATS_") && !strings.HasPrefix(kv, "GO_CLUSTER_") && !strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			out = append(out, kv)
		}
	}
	return append(out, env...) // the last of a name wins
}

// member is a node of the test cluster: a cluster.Node with a health
// checker kept in step by an adapter, on a connection of its own.
type member struct {
	node    *cluster.Node
	checker *health.Checker
}

// startMember starts node nodeID of cluster clusterID, its config
// changed by opts; everything is stopped at test cleanup.
func startMember(t *testing.T, srv *natstest.Server, clusterID, nodeID string, opts ...func(*cluster.Config)) *member {
	t.Helper()
	return startMemberOn(t, srv.Connect(t, nats.Name(nodeID)), clusterID, nodeID, opts...)
}

// startMemberOn is startMember on a connection of the caller's, which
// the caller closes.
func startMemberOn(t *testing.T, nc *nats.Conn, clusterID, nodeID string, opts ...func(*cluster.Config)) *member {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	if os.Getenv("GOCLUSTER_TEST_LOG") != "" {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	checker, err := health.NewChecker(health.Config{ClusterID: clusterID, NodeID: nodeID, Conn: nc, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	adapter := health.NewAdapter(checker)
	cfg := cluster.Config{
		ClusterID: clusterID, NodeID: nodeID, Conn: nc, Logger: logger,
		// Long enough to ride out a loaded machine under -race.
		LeaseTTL: 3 * time.Second, RenewInterval: 750 * time.Millisecond,
	}
	for _, o := range opts {
		o(&cfg)
	}
	node, err := cluster.NewNode(cfg, adapter)
	if err != nil {
		t.Fatal(err)
	}
	if err := adapter.Bind(node); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := checker.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(checker.Stop)
	if err := node.Start(ctx); err != nil {
		t.Fatal(err)
	}
	m := &member{node: node, checker: checker}
	t.Cleanup(func() { m.stop(t) })
	return m
}

// stop stops the node and its checker; it is idempotent.
func (m *member) stop(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.node.Stop(ctx); err != nil && !errors.Is(err, cluster.ErrStopped) {
		t.Errorf("stop %s: %v", m.node.Config().NodeID, err)
	}
	m.checker.Stop()
}

// waitLeader waits until exactly one member leads and all agree on it.
func waitLeader(t *testing.T, ms []*member) *member {
	t.Helper()
	var leader *member
	natstest.WaitFor(t, 15*time.Second, func() bool {
		leader = nil
		for _, m := range ms {
			if m.node.IsLeader() {
				if leader != nil {
					return false
				}
				leader = m
			}
		}
		if leader == nil {
			return false
		}
		for _, m := range ms {
			if m.node.Leader() != leader.node.Config().NodeID {
				return false
			}
		}
		return true
	}, "no single agreed leader")
	return leader
}

// other returns a member that is neither of skip.
func other(ms []*member, skip ...*member) *member {
	for _, m := range ms {
		found := false
		for _, s := range skip {
			found = found || m == s
		}
		if !found {
			return m
		}
	}
	return nil
}
