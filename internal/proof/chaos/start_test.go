package chaos

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/faultproxy"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/store"
)

// TestStartSurvivesALostRequest: found by the chaos run (seed 42). A Node
// started while its server goes away loses its first JetStream request
// (the bucket lookup) with the connection; the client reconnects at once,
// but nobody asks again, and Start waits for an answer until its ctx ends.
// Start should retry each request within RequestTimeout, as the election
// does, and succeed soon after the connection is back.
func TestStartSurvivesALostRequest(t *testing.T) {
	// Runs alone: an upper bound on time (Start within 3 s of the
	// connection's return).
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

// TestStartSurvivesALostLeaseRead: found by the chaos run (seed 99, 10
// minutes): two Nodes started during a route partition failed after
// exactly their 20s Start ctx with "start: context deadline exceeded",
// though the partition healed 9s before. A campaigning Node's Start reads
// the lease key (the protocol check, docs/design.md §5.9) after opening
// the bucket; that read used the whole Start ctx, so one lost request cost
// all of it. It should be asked again within RequestTimeout, as the
// bucket's lookup is (TestStartSurvivesALostRequest).
//
// The node reaches JetStream through an API prefix that a relay on the
// test's own connection forwards to $JS.API, dropping the first read of a
// message (the lease key's Get): a request lost on the way, as a server
// cut off from the stream's leader loses it.
func TestStartSurvivesALostLeaseRead(t *testing.T) {
	// Runs alone: an upper bound on time (Start within 3 s).
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	relay := srv.Connect(t)
	js, err := jetstream.New(relay)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, _, err := store.Create(ctx, js, "lostread", store.Options{LeaseTTL: time.Second}); err != nil {
		t.Fatal(err)
	}
	const prefix = "$JS.relay.API."
	var dropped atomic.Int32
	sub, err := relay.Subscribe(prefix+">", func(m *nats.Msg) {
		api := strings.TrimPrefix(m.Subject, prefix)
		if (strings.HasPrefix(api, "DIRECT.GET.") || strings.HasPrefix(api, "STREAM.MSG.GET.")) && dropped.Add(1) == 1 {
			return // lost
		}
		go func() {
			fwd := nats.NewMsg("$JS.API." + api)
			fwd.Data, fwd.Header = m.Data, m.Header
			rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer rcancel()
			if reply, err := relay.RequestMsgWithContext(rctx, fwd); err == nil {
				out := nats.NewMsg(m.Reply)
				out.Data, out.Header = reply.Data, reply.Header
				_ = relay.PublishMsg(out)
			}
		}()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	// The node's requests come on another connection: the server must
	// know the relay's subscription before the first of them, or they
	// find no responders.
	if err := relay.Flush(); err != nil {
		t.Fatal(err)
	}

	n, err := cluster.NewNode(cluster.Config{ClusterID: "lostread", NodeID: "a", NATSURLs: []string{srv.URL()},
		JetStreamAPIPrefix: strings.TrimSuffix(prefix, "."), LeaseTTL: time.Second, RenewInterval: 250 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	err = n.Start(ctx)
	took := time.Since(begin)
	if err == nil {
		defer func() { _ = n.Stop(context.Background()) }()
	}
	if dropped.Load() == 0 {
		t.Fatalf("the relay saw no read of a message: the test lost nothing (Start returned %v after %v)", err, took.Round(time.Millisecond))
	}
	if err != nil || took > 3*time.Second {
		t.Errorf("Start returned %v after %v, a read of the lease key lost (RequestTimeout %v); want success within a few RequestTimeouts",
			err, took.Round(time.Millisecond), n.Config().RequestTimeout)
	}
}
