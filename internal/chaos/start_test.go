package chaos

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/faultproxy"
	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// TestStartSurvivesALostRequest: found by the chaos run (seed 42). A Node
// started while its server goes away loses its first JetStream request
// (the bucket lookup) with the connection; the client reconnects at once,
// but nobody asks again, and Start waits for an answer until its ctx ends.
// Start should retry each request within RequestTimeout, as the election
// does, and succeed soon after the connection is back.
func TestStartSurvivesALostRequest(t *testing.T) {
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	proxy := faultproxy.New(t, srv.Addr())
	nc, err := nats.Connect(proxy.URL(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	n, err := cluster.NewNode(cluster.Config{ClusterID: "lost", NodeID: "a", Conn: nc,
		LeaseTTL: time.Second, RenewInterval: 250 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The request is sent into a blackhole; Restore then closes that
	// connection (it lost bytes) and the client reconnects at once.
	proxy.Blackhole()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	started := make(chan error, 1)
	begin := time.Now()
	go func() { started <- n.Start(ctx) }()
	natstest.WaitFor(t, 5*time.Second, func() bool { return time.Since(begin) > 300*time.Millisecond }, "pause")
	proxy.Restore()
	restored := time.Now()
	err = <-started
	took := time.Since(restored)
	if err == nil {
		defer func() { _ = n.Stop(context.Background()) }()
	}
	if err != nil || took > 3*time.Second {
		t.Errorf("Start returned %v, %v after the connection came back (RequestTimeout %v); want success within a few RequestTimeouts",
			err, took.Round(time.Millisecond), n.Config().RequestTimeout)
	}
}
