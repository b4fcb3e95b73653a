package health

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

func TestQueryNode(t *testing.T) {
	natstest.CheckLeaks(t)
	srv := runServer(t)

	// n1 dials its own connection from a list whose first URL is dead: every
	// URL is used.
	n1, err := NewChecker(Config{
		ClusterID: "orders", NodeID: "n1", Logger: quiet,
		NATSURLs:    []string{"nats://127.0.0.1:1", srv.URL()},
		NATSOptions: []nats.Option{nats.DontRandomize()},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := n1.Start(testCtx(t, 5*time.Second)); err != nil {
		t.Fatalf("Start with a dead URL first: %v", err)
	}
	t.Cleanup(n1.Stop)

	n2 := startChecker(t, srv.Connect(t), "orders", "n2")
	n2.SetRole("PRIMARY")
	n2.SetLeader("n2")
	n2.SetCustom("version", "1.4.2")
	n2.SetCustom("queue", 3)
	n2.SetEpochFunc(func() int64 { return 7 })

	before := time.Now().UnixMilli()
	r, err := n1.QueryNode(testCtx(t, 5*time.Second), "n2", time.Second)
	if err != nil {
		t.Fatalf("QueryNode: %v", err)
	}
	after := time.Now().UnixMilli()
	if r.NodeID != "n2" || r.Role != "PRIMARY" || r.Leader != "n2" || r.Epoch != 7 || !r.IsLeader() {
		t.Fatalf("response = %+v", r)
	}
	if r.Timestamp < before || r.Timestamp > after {
		t.Errorf("timestamp %d not within [%d, %d]", r.Timestamp, before, after)
	}
	if r.UptimeMs < 0 || r.UptimeMs > 60_000 {
		t.Errorf("uptimeMs = %d", r.UptimeMs)
	}
	if r.Custom["version"] != "1.4.2" || r.Custom["queue"] != float64(3) {
		t.Errorf("custom = %#v", r.Custom)
	}

	// A node asks itself too; defaults before any SetRole: PASSIVE, no leader.
	self, err := n1.QueryNode(testCtx(t, 5*time.Second), "n1", time.Second)
	if err != nil {
		t.Fatalf("QueryNode(self): %v", err)
	}
	if self.Role != "PASSIVE" || self.Leader != "" || self.Custom != nil || self.Epoch != 0 {
		t.Errorf("self = %+v", self)
	}
	// Response() is what the node would answer.
	if got := n2.Response(); got.NodeID != "n2" || got.Role != "PRIMARY" || got.Epoch != 7 {
		t.Errorf("Response() = %+v", got)
	}
}

func TestQueryNodeNoResponders(t *testing.T) {
	natstest.CheckLeaks(t)
	srv := runServer(t)
	cl := newTestClient(t, srv.Connect(t), "orders")

	start := time.Now()
	_, err := cl.QueryNode(testCtx(t, 30*time.Second), "ghost", 10*time.Second)
	elapsed := time.Since(start)
	if !errors.Is(err, ErrNoResponders) || !errors.Is(err, nats.ErrNoResponders) {
		t.Fatalf("err = %v, want ErrNoResponders wrapping nats.ErrNoResponders", err)
	}
	if !strings.Contains(err.Error(), `"ghost"`) {
		t.Errorf("error does not name the node: %v", err)
	}
	if elapsed > 2*time.Second {
		t.Errorf("no-responders took %v; it should not wait for the 10s timeout", elapsed)
	}
}

func TestQueryNodeTimeout(t *testing.T) {
	natstest.CheckLeaks(t)
	srv := runServer(t)
	nc := srv.Connect(t)
	// Something subscribed that never answers: the request times out.
	sub, err := nc.SubscribeSync(NodeSubject("orders", "mute"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	cl := newTestClient(t, nc, "orders")

	_, err = cl.QueryNode(testCtx(t, 10*time.Second), "mute", 100*time.Millisecond)
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want ErrTimeout wrapping context.DeadlineExceeded", err)
	}

	// A cancelled ctx is reported as such, not as a timeout.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := cl.QueryNode(ctx, "mute", time.Second); !errors.Is(err, context.Canceled) || errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	// An invalid node ID is refused before anything is sent.
	if _, err := cl.QueryNode(ctx, "a..b", time.Second); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("err = %v, want ErrInvalidConfig", err)
	}
}

func TestLifecycle(t *testing.T) {
	natstest.CheckLeaks(t)
	srv := runServer(t)
	nc := srv.Connect(t)
	ctx := testCtx(t, 10*time.Second)

	c, err := NewChecker(Config{ClusterID: "orders", NodeID: "n1", Conn: nc, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.QueryNode(ctx, "n1", time.Second); !errors.Is(err, ErrNotStarted) {
		t.Fatalf("QueryNode before Start: %v, want ErrNotStarted", err)
	}
	if _, err := c.QueryCluster(ctx, time.Second); !errors.Is(err, ErrNotStarted) {
		t.Fatalf("QueryCluster before Start: %v, want ErrNotStarted", err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); !errors.Is(err, ErrAlreadyStarted) {
		t.Fatalf("second Start: %v, want ErrAlreadyStarted", err)
	}
	if _, err := c.QueryNode(ctx, "n1", time.Second); err != nil {
		t.Fatalf("QueryNode: %v", err)
	}

	c.Stop()
	c.Stop() // idempotent
	if err := c.Start(ctx); !errors.Is(err, ErrStopped) {
		t.Fatalf("Start after Stop: %v, want ErrStopped", err)
	}
	if _, err := c.QueryNode(ctx, "n1", time.Second); !errors.Is(err, ErrStopped) {
		t.Fatalf("QueryNode after Stop: %v, want ErrStopped", err)
	}
	// The shared connection stays open; the node no longer answers.
	if nc.IsClosed() {
		t.Fatal("Stop closed the shared connection")
	}
	if _, err := newTestClient(t, nc, "orders").QueryNode(ctx, "n1", 5*time.Second); !errors.Is(err, ErrNoResponders) {
		t.Fatalf("query after Stop: %v, want ErrNoResponders", err)
	}

	// Stop before Start is allowed, and final.
	c2, _ := NewChecker(Config{ClusterID: "orders", NodeID: "n2", Conn: nc, Logger: quiet})
	c2.Stop()
	if err := c2.Start(ctx); !errors.Is(err, ErrStopped) {
		t.Fatalf("Start after Stop: %v, want ErrStopped", err)
	}
}

func TestOwnConnectionClosedOnStop(t *testing.T) {
	natstest.CheckLeaks(t)
	srv := runServer(t)
	c, err := NewChecker(Config{ClusterID: "orders", NodeID: "n1", NATSURLs: []string{srv.URL()}, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(testCtx(t, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	c.mu.RLock()
	nc := c.nc
	c.mu.RUnlock()
	c.Stop()
	if !nc.IsClosed() {
		t.Fatal("Stop left the Checker's own connection open")
	}
}

func TestConnectError(t *testing.T) {
	natstest.CheckLeaks(t)
	c, err := NewChecker(Config{ClusterID: "orders", NodeID: "n1", Logger: quiet,
		NATSURLs: []string{"nats://127.0.0.1:1", "nats://127.0.0.1:2"}})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Start(testCtx(t, 5*time.Second))
	if !errors.Is(err, ErrConnect) {
		t.Fatalf("Start: %v, want ErrConnect", err)
	}
	if !strings.Contains(err.Error(), "127.0.0.1:2") {
		t.Errorf("error does not list the URLs: %v", err)
	}
	c.Stop()

	// A credentials file that does not exist fails Start, not NewChecker.
	srv := runServer(t)
	c, err = NewChecker(Config{ClusterID: "orders", NodeID: "n1", Logger: quiet,
		NATSURLs: []string{srv.URL()}, NATSCredentials: t.TempDir() + "/missing.creds"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(testCtx(t, 5*time.Second)); !errors.Is(err, ErrConnect) {
		t.Fatalf("Start with missing creds: %v, want ErrConnect", err)
	}
	c.Stop()
}

func TestConfigValidation(t *testing.T) {
	ok := Config{ClusterID: "orders", NodeID: "node-1", NATSURLs: []string{"nats://127.0.0.1:4222"}}
	tests := []struct {
		name  string
		edit  func(*Config)
		field string
	}{
		{"empty cluster", func(c *Config) { c.ClusterID = "" }, "ClusterID"},
		{"wildcard cluster", func(c *Config) { c.ClusterID = "*" }, "ClusterID"},
		{"dotted cluster", func(c *Config) { c.ClusterID = "a.b" }, "ClusterID"},
		{"empty node", func(c *Config) { c.NodeID = "" }, "NodeID"},
		{"tail wildcard node", func(c *Config) { c.NodeID = ">" }, "NodeID"},
		{"space in node", func(c *Config) { c.NodeID = "node 1" }, "NodeID"},
		{"node too long", func(c *Config) { c.NodeID = strings.Repeat("n", wire.MaxNodeIDLen+1) }, "NodeID"},
		{"empty label in node", func(c *Config) { c.NodeID = "db1..example.com" }, "NodeID"},
		{"no URLs", func(c *Config) { c.NATSURLs = nil }, "NATSURLs"},
		{"empty URL", func(c *Config) { c.NATSURLs = []string{""} }, "NATSURLs[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := ok
			tt.edit(&cfg)
			_, err := NewChecker(cfg)
			if !errors.Is(err, ErrInvalidConfig) || !errors.Is(err, cluster.ErrInvalidConfig) {
				t.Fatalf("err = %v, want ErrInvalidConfig", err)
			}
			if !strings.Contains(err.Error(), tt.field) {
				t.Errorf("error %q does not name %s", err, tt.field)
			}
		})
	}
	if _, err := NewChecker(Config{ClusterID: "orders", NodeID: "db1.example.com", NATSURLs: ok.NATSURLs}); err != nil {
		t.Errorf("host name as NodeID: %v", err)
	}
	if _, err := NewChecker(ok); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	// With Conn, URLs are not needed.
	if err := (Config{ClusterID: "orders", NodeID: "n1", Conn: &nats.Conn{}}).Validate(); err != nil {
		t.Fatalf("Conn without URLs: %v", err)
	}
	if _, err := NewClient(nil, "orders"); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("NewClient(nil): %v", err)
	}
	if _, err := NewClient(&nats.Conn{}, "or ders"); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("NewClient(bad id): %v", err)
	}
}

func TestSubjects(t *testing.T) {
	if got := NodeSubject("orders", "node-1"); got != "cluster.orders.health.node-1" {
		t.Errorf("NodeSubject = %q", got)
	}
	if got := NodeSubject("orders", "db1.example.com"); got != "cluster.orders.health.db1=example=com" {
		t.Errorf("NodeSubject(host name) = %q", got)
	}
	if got := ClusterSubject("orders"); got != "cluster.orders.health" {
		t.Errorf("ClusterSubject = %q", got)
	}
}
