package agent

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// TestPoolDialsOnceForMembersStartingTogether: members that need the same
// connection at once make one dial and get one connection; the last
// release closes it. A dial that fails fails for every member waiting on
// it, and leaves nothing in the pool.
func TestPoolDialsOnceForMembersStartingTogether(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	pool := newConnPool(quiet())
	timing, err := timingOf(Election{LeaseTTL: Duration(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	var dials atomic.Int32
	dialTo := func(url string) dialFunc {
		return func(ctx context.Context, handlers []nats.Option) (*nats.Conn, error) {
			dials.Add(1)
			return dialNATS(ctx, "pooltest", Endpoint{URLs: []string{url}}, timing, handlers)
		}
	}
	const members = 20
	type got struct {
		c   *sharedConn
		nc  *nats.Conn
		w   *natsWatch
		err error
	}
	acquireAll := func(url string) []got {
		out := make([]got, members)
		var wg sync.WaitGroup
		for i := range out {
			wg.Go(func() {
				w := newNATSWatch()
				c, nc, err := pool.acquire(t.Context(), connRequest{key: "servers " + url, cluster: "c", servers: url, watch: w, dial: dialTo(url)})
				out[i] = got{c, nc, w, err}
			})
		}
		wg.Wait()
		return out
	}

	all := acquireAll(srv.URL())
	for _, g := range all {
		if g.err != nil || g.nc != all[0].nc {
			t.Fatalf("a member got %v, %v; want the one connection", g.nc, g.err)
		}
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("%d members starting together dialled %d times, want once", members, n)
	}
	for _, g := range all[1:] {
		pool.release(g.c, g.w)
	}
	if all[0].nc.IsClosed() || pool.open() != 1 {
		t.Fatalf("the connection closed (%v), or the pool holds %d, with one member left", all[0].nc.IsClosed(), pool.open())
	}
	pool.release(all[0].c, all[0].w)
	if !all[0].nc.IsClosed() || pool.open() != 0 {
		t.Fatalf("after the last release: closed %v, pool holds %d", all[0].nc.IsClosed(), pool.open())
	}

	srv.Shutdown()
	dials.Store(0)
	for _, g := range acquireAll(srv.URL()) {
		if !errors.Is(g.err, cluster.ErrConnect) {
			t.Errorf("a member's acquire with the server down: %v, want ErrConnect", g.err)
		}
	}
	if n := dials.Load(); n < 1 || n > members {
		t.Errorf("%d members made %d dials with the server down, want 1 to %d", members, n, members)
	}
	if n := pool.open(); n != 0 {
		t.Errorf("failed dials left %d connections in the pool", n)
	}
}
