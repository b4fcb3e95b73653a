package health

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// TestConcurrentUse changes custom values, role, leader and epoch source
// while queries are in flight; run with -race.
func TestConcurrentUse(t *testing.T) {
	natstest.CheckLeaks(t)
	srv := runServer(t)
	c := startChecker(t, srv.Connect(t), "orders", "n1")
	cl := newTestClient(t, srv.Connect(t), "orders")
	ctx := testCtx(t, 30*time.Second)

	const writers, queriers, rounds = 4, 4, 100
	var wg sync.WaitGroup
	errs := make(chan error, queriers*rounds)
	for w := range writers {
		wg.Go(func() {
			for i := range rounds {
				key := fmt.Sprintf("k%d", i%5)
				c.SetCustom(key, map[string]any{"writer": w, "i": i})
				c.SetRole([]string{"PRIMARY", "PASSIVE"}[i%2])
				c.SetLeader(fmt.Sprintf("n%d", w))
				c.SetEpochFunc(func() int64 { return int64(i) })
				if i%3 == 0 {
					c.SetReadyFunc(nil)
				} else {
					c.SetReadyFunc(func() error { return fmt.Errorf("writer %d round %d", w, i) })
				}
				if i%7 == 0 {
					c.SetCustom(key, nil)
				}
			}
		})
	}
	for range queriers {
		wg.Go(func() {
			for i := range rounds {
				if i%2 == 0 {
					if _, err := cl.QueryNode(ctx, "n1", 5*time.Second); err != nil {
						errs <- err
					}
				} else {
					_ = c.Response()
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestUnencodableCustom(t *testing.T) {
	natstest.CheckLeaks(t)
	srv := runServer(t)
	c := startChecker(t, srv.Connect(t), "orders", "n1")
	c.SetCustom("ok", "fine")
	cl := newTestClient(t, srv.Connect(t), "orders")
	ctx := testCtx(t, 10*time.Second)

	for name, v := range map[string]any{
		"channel":  make(chan int),
		"function": func() {},
		"NaN":      math.NaN(),
		"nested":   map[string]any{"inf": math.Inf(1)},
	} {
		t.Run(name, func(t *testing.T) {
			c.SetCustom("bad", v)
			r, err := cl.QueryNode(ctx, "n1", 2*time.Second)
			if !errors.Is(err, ErrRemote) {
				t.Fatalf("err = %v, want ErrRemote", err)
			}
			if r.NodeID != "n1" || !strings.Contains(r.Error, "encode response") || r.Custom != nil {
				t.Fatalf("response = %+v", r)
			}
			if got := c.Response(); got.Error == "" {
				t.Errorf("Response() = %+v, want Error set", got)
			}
			// The cluster-wide query includes the error reply.
			rs, err := cl.QueryClusterN(ctx, 1, 2*time.Second)
			if err != nil || len(rs) != 1 || rs[0].Error == "" {
				t.Fatalf("QueryClusterN = %+v, %v", rs, err)
			}
		})
	}

	c.SetCustom("bad", nil) // removing the value restores normal replies
	r, err := cl.QueryNode(ctx, "n1", 2*time.Second)
	if err != nil || r.Custom["ok"] != "fine" || len(r.Custom) != 1 {
		t.Fatalf("after removal: %+v, %v", r, err)
	}
}

// TestStopUnderLoad stops a Checker while requests keep coming: Stop
// returns, nothing is answered afterwards, no goroutine is left.
func TestStopUnderLoad(t *testing.T) {
	natstest.CheckLeaks(t)
	srv := runServer(t)
	c, err := NewChecker(Config{ClusterID: "orders", NodeID: "n1", NATSURLs: []string{srv.URL()}, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(testCtx(t, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	nc := srv.Connect(t)
	cl := newTestClient(t, nc, "orders")
	ctx := testCtx(t, 30*time.Second)

	var answered sync.WaitGroup
	answered.Add(1)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var once sync.Once
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := cl.QueryNode(ctx, "n1", time.Second); err == nil {
					once.Do(answered.Done)
				}
			}
		})
	}
	answered.Wait() // load is on
	c.Stop()
	close(stop)
	wg.Wait()

	if _, err := cl.QueryNode(ctx, "n1", 5*time.Second); !errors.Is(err, ErrNoResponders) {
		t.Fatalf("after Stop: %v, want ErrNoResponders", err)
	}
}
