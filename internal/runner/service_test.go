package runner

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// startServiceNode starts a node of srv whose hooks are svc.
func startServiceNode(t *testing.T, srv *natstest.Server, id string, svc *Service) *cluster.Node {
	t.Helper()
	return startNodeOf(t, cluster.Config{ClusterID: "svc-" + id, NodeID: id, NATSURLs: []string{srv.URL()}, LeaseTTL: parallelTTL}, svc)
}

// startNodeOf starts a node of cfg whose hooks are svc, bound to it; nil:
// none.
func startNodeOf(t *testing.T, cfg cluster.Config, svc *Service) *cluster.Node {
	t.Helper()
	var hooks cluster.Hooks
	if svc != nil {
		hooks = svc
	}
	n, err := cluster.NewNode(cfg, hooks)
	if err != nil {
		t.Fatal(err)
	}
	if svc != nil {
		svc.Bind(n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return n
}

func stop(t *testing.T, n *cluster.Node) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := n.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestServiceRestartsWithBackoff: a service that exits while leading is
// started again, with the tenure's epoch each time; Stop waits for the
// running one.
func TestServiceRestartsWithBackoff(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	log := filepath.Join(t.TempDir(), "log")
	svc, err := NewService(ServiceConfig{Argv: []string{"sh", "-c", `echo "$GO_CLUSTER_EPOCH" >> ` + log + `; sleep 0.05; exit 3`},
		BackoffMin: 20 * time.Millisecond, BackoffMax: 40 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	n := startServiceNode(t, srv, "restart", svc)
	natstest.WaitFor(t, 10*time.Second, func() bool { return strings.Count(readFile(log), "\n") >= 3 }, "the service was not restarted")
	if !n.IsLeader() {
		t.Fatal("the node stopped leading")
	}
	stop(t, n)
	lines := strings.Fields(readFile(log))
	for _, l := range lines {
		if l != lines[0] || l == "0" {
			t.Fatalf("epochs %q: want one tenure's, not 0", lines)
		}
	}
}

// TestServiceStepsDownOnExit: with StepDownOnExit the node gives up
// leadership when the service exits.
func TestServiceStepsDownOnExit(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	svc, err := NewService(ServiceConfig{Argv: []string{"sh", "-c", "sleep 0.1; exit 0"}, StepDownOnExit: true})
	if err != nil {
		t.Fatal(err)
	}
	n := startServiceNode(t, srv, "stepdown", svc)
	natstest.WaitFor(t, 10*time.Second, n.IsLeader, "never led")
	natstest.WaitFor(t, 5*time.Second, func() bool { return !n.IsLeader() }, "did not step down when the service exited")
	stop(t, n)
}
