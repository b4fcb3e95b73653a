package cluster

import (
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/ozanturksever/go-cluster/internal/natstest"
)

func TestPermissionDeniedIsPermanentAndSurfaced(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t, natstest.WithOptions(func(o *server.Options) {
		o.NoAuthUser = "admin" // the harness connects without credentials
		o.Users = []*server.User{
			{Username: "admin", Password: "admin"},
			{Username: "reader", Password: "reader", Permissions: &server.Permissions{
				// May use the JetStream API and watch, may not write KV keys.
				Publish:   &server.SubjectPermission{Allow: []string{"$JS.API.>", "_INBOX.>"}},
				Subscribe: &server.SubjectPermission{Allow: []string{">"}},
			}},
		}
	}))
	id := uniqueClusterID(t)
	admin := testConfig(id, "creator", srv.URL())
	admin.NATSOptions = []nats.Option{nats.UserInfo("admin", "admin")}
	// The admin creates the bucket and steps down at once, leaving it released.
	rec := newRecorder()
	creator := startNode(t, admin, rec, nil)
	natstest.WaitFor(t, 5*time.Second, creator.IsLeader, "creator never led")
	if err := creator.Stop(ctx(t)); err != nil {
		t.Fatal(err)
	}

	cfg := testConfig(id, "reader", srv.URL())
	cfg.NATSOptions = []nats.Option{nats.UserInfo("reader", "reader")}
	n := startNode(t, cfg, rec, nil)
	select {
	case <-n.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("node without write permission still campaigning after 10s")
	}
	if !errors.Is(n.Err(), ErrPermissionDenied) {
		t.Fatalf("Err() = %v, want ErrPermissionDenied", n.Err())
	}
	if n.IsLeader() {
		t.Error("leader without permission to write")
	}
	rec.check(t)
}
