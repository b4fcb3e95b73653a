package chaos

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/faultproxy"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/securetest"
)

// TestForeignPermissionErrorDoesNotStopTheNode: the application shares its
// connection with the Node (Config.Conn, as the README suggests) and is
// refused something of its own on the JetStream API, a stream that is not
// the Node's. Later the network stalls for less than the lease deadline:
// the renewals time out, which must cost nothing. The Node must not read
// the application's old permission error as its own and stop for good.
func TestForeignPermissionErrorDoesNotStopTheNode(t *testing.T) {
	// Runs alone: a stall 1.1 s short of the lease deadline must cost
	// nothing, a margin load beside it would eat.
	natstest.CheckLeaks(t)
	const id = "shared"
	perms := securetest.NodePermissions(id, "a", "_INBOX", true)
	srv := natstest.RunServer(t, natstest.WithOptions(func(o *server.Options) {
		o.NoAuthUser = "admin" // the harness connects without credentials
		o.Users = []*server.User{
			{Username: "admin", Password: "admin"},
			{Username: "app", Password: "app", Permissions: perms.Server()},
		}
	}))
	proxy := faultproxy.New(t, srv.Addr())
	nc, err := nats.Connect(proxy.URL(), nats.UserInfo("app", "app"), nats.MaxReconnects(-1),
		nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	n, err := cluster.NewNode(cluster.Config{ClusterID: id, NodeID: "a", Conn: nc, LeaseTTL: 4 * time.Second,
		RenewInterval: time.Second, Logger: slog.New(slog.DiscardHandler)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = n.Stop(context.Background()) }()
	natstest.WaitFor(t, 10*time.Second, n.IsLeader, "a never led")

	// The application asks about a stream of its own it may not see.
	_, _ = nc.Request("$JS.API.STREAM.INFO.ORDERS", nil, 500*time.Millisecond)
	natstest.WaitFor(t, 5*time.Second, func() bool { return errors.Is(nc.LastError(), nats.ErrPermissionViolation) },
		"the server never reported the application's permission violation")

	// A stall shorter than the lease deadline: renewals time out.
	proxy.Stall()
	stalled := time.Now()
	natstest.WaitFor(t, 5*time.Second, func() bool { return time.Since(stalled) > 2500*time.Millisecond }, "stall")
	proxy.Restore()
	hold := time.Now().Add(3 * time.Second)
	natstest.WaitFor(t, 10*time.Second, func() bool {
		select {
		case <-n.Done():
			t.Fatalf("the node stopped for good after a stall shorter than its lease: %v", n.Err())
		default:
		}
		return time.Now().After(hold)
	}, "hold")
	if !n.IsLeader() {
		t.Error("the node lost leadership over a stall shorter than its lease deadline")
	}
}
