package metrics_test

import (
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/faultproxy"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/wire"
	"github.com/ozanturksever/go-cluster/metrics"
	"github.com/ozanturksever/go-cluster/state"
)

// A deposed leader that does not know it yet: its write is refused by the
// server and counted as fenced; once it knows, its write is refused by
// the node itself and counted as not_leader.
func TestStateWritesCountFencedRefusals(t *testing.T) {
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	// The node's replies come through a proxy that can slow them, so that
	// it learns late that the lease moved.
	proxy := faultproxy.New(t, srv.Addr())
	const id = "fenced"
	m, err := metrics.New(id, "a")
	if err != nil {
		t.Fatal(err)
	}
	a, err := cluster.NewNode(nodeConfig(id, "a", proxy.URL(), m), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(ctx(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := a.Stop(ctx(t)); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	natstest.WaitFor(t, 10*time.Second, a.IsLeader, "a did not become leader")
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(m)
	written := func(outcome string) float64 {
		t.Helper()
		v, ok := gather(t, reg).value("gocluster_state_writes_total", "outcome", string(outcome))
		if !ok {
			t.Fatalf("no state_writes_total series for %s", outcome)
		}
		return v
	}

	if _, err := a.State().Put(ctx(t), "k", []byte("before")); err != nil {
		t.Fatal(err)
	}
	if got := written("ok"); got != 1 {
		t.Errorf("ok writes = %v, want 1", got)
	}

	// Another client takes the lease while a's replies lag behind.
	proxy.Delay(300 * time.Millisecond)
	nc := srv.Connect(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx(t), wire.BucketName(id))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx(t), wire.LeaseKey, []byte(`{"node_id":"x","epoch":50}`)); err != nil {
		t.Fatal(err)
	}
	if !a.IsLeader() {
		t.Fatal("a already knows it lost the lease: the write would not reach the server")
	}
	if _, err := a.State().Put(ctx(t), "k", []byte("after")); !errors.Is(err, state.ErrFenced) {
		t.Fatalf("Put of the deposed leader = %v, want ErrFenced", err)
	}
	if got := written("fenced"); got != 1 {
		t.Errorf("fenced writes = %v, want 1", got)
	}

	proxy.Restore()
	natstest.WaitFor(t, 10*time.Second, func() bool { return !a.IsLeader() }, "a did not notice the lease moved")
	if err := a.State().Delete(ctx(t), "k"); !errors.Is(err, cluster.ErrNotLeader) || errors.Is(err, state.ErrFenced) {
		t.Fatalf("Delete once a knows = %v, want ErrNotLeader alone", err)
	}
	for outcome, want := range map[string]float64{
		"ok": 1, "fenced": 1, "not_leader": 1, "error": 0,
	} {
		if got := written(outcome); got != want {
			t.Errorf("%s writes = %v, want %v", outcome, got, want)
		}
	}
	// Nothing of the deposed tenure landed.
	if e, err := kv.Get(ctx(t), "state.k"); err != nil || string(e.Value()) != "before" {
		t.Errorf("state.k = %v, %v; want before", e, err)
	}
}

// gather collects reg's series, by metric name.
func gather(t *testing.T, reg *prometheus.Registry) families {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	fams := families{}
	for _, mf := range mfs {
		fams[mf.GetName()] = mf
	}
	return fams
}
