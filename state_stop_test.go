package cluster

import (
	"context"
	"errors"
	"github.com/ozanturksever/go-cluster/state"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/faultproxy"
	"github.com/ozanturksever/go-cluster/internal/fenced"
	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// A state write in flight when Stop closes the node's connection fails
// with ErrStopped: the write was sent (here it landed) and its answer
// never came, so its outcome is unknown to the writer, and the node that
// sent it has stopped.
func TestStateWriteInFlightWhenStopCloses(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	proxy := faultproxy.New(t, srv.Addr())
	cfg := stableConfig(id, "a", proxy.URL())
	cfg.RequestTimeout = 300 * time.Millisecond // the release's, under Stop
	a := startNode(t, cfg, rec, nil)
	waitOneLeader(t, []*Node{a}, 10*time.Second)
	kv := bindKV(t, srv.URL(), id)

	// Replies to a are held back: its write lands, its answer waits.
	proxy.Delay(time.Minute)
	put := make(chan error, 1)
	go func() {
		_, err := a.State().Put(ctx(t), "k", []byte("v"))
		put <- err
	}()
	natstest.WaitFor(t, 5*time.Second, func() bool {
		e, err := kv.Get(ctx(t), fenced.KVKey("k"))
		return err == nil && string(e.Value()) == "v"
	}, "the write never reached the server")
	select {
	case err := <-put:
		t.Fatalf("Put returned before its answer could arrive: %v", err)
	default:
	}

	stopped := make(chan error, 1)
	go func() {
		c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		stopped <- a.Stop(c)
	}()
	var err error
	select {
	case err = <-put:
	case <-time.After(15 * time.Second):
		t.Fatal("the write in flight did not return when Stop closed the connection")
	}
	if !errors.Is(err, ErrStopped) || errors.Is(err, state.ErrFenced) || errors.Is(err, ErrNotLeader) {
		t.Errorf("write in flight when Stop closed the connection = %v, want ErrStopped, not a refusal", err)
	}
	if err := <-stopped; err != nil {
		t.Errorf("Stop = %v", err)
	}
	proxy.Restore()
	rec.check(t)
}
