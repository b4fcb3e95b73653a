package main

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// handoverFloor times n handovers made of bare KV calls, the least a
// handover can cost: a compare-and-swap from one connection (the
// release), its delivery to a watcher on a second connection, and that
// connection's compare-and-swap on the revision delivered (the acquire).
// Each round idles first as long as the handover rounds do (idle), so
// that both pay the same cost of waking an idle machine; casRTT, in a
// tight loop, does not.
func handoverFloor(ctx context.Context, b *backend, clusterID string, n int, idle time.Duration) ([]time.Duration, error) {
	leader, closeL, err := bucketFrom(ctx, b, clusterID, "bench floor leader")
	if err != nil {
		return nil, err
	}
	defer closeL()
	successor, closeS, err := bucketFrom(ctx, b, clusterID, "bench floor successor")
	if err != nil {
		return nil, err
	}
	defer closeS()
	w, err := successor.Watch(ctx, "bench-floor")
	if err != nil {
		return nil, err
	}
	defer func() { _ = w.Stop() }()
	seen := func(rev uint64) bool { // until the watch delivers rev
		for e := range w.Updates() {
			if e != nil && e.Revision() >= rev {
				return true
			}
		}
		return false
	}
	held := []byte(`{"node_id":"n1","epoch":5,"expires_at":"2026-01-01T00:00:00Z","acquired_at":"2026-01-01T00:00:00Z","ttl_ms":10000}`)
	released := []byte(`{"epoch":5,"expires_at":"2026-01-01T00:00:00Z","acquired_at":"2026-01-01T00:00:00Z"}`)
	out := make([]time.Duration, 0, n)
	for range n {
		rev, err := leader.Put(ctx, "bench-floor", held)
		if err != nil {
			return nil, err
		}
		seen(rev)
		time.Sleep(idle)
		t0 := time.Now()
		if rev, err = leader.Update(ctx, "bench-floor", released, rev); err != nil {
			return nil, err
		}
		if !seen(rev) {
			return out, context.Canceled
		}
		if _, err = successor.Update(ctx, "bench-floor", held, rev); err != nil {
			return nil, err
		}
		out = append(out, time.Since(t0))
	}
	return out, nil
}

// bucketFrom opens the cluster's bucket on a connection of its own.
func bucketFrom(ctx context.Context, b *backend, clusterID, name string) (jetstream.KeyValue, func(), error) {
	nc, err := dial(b.urls, name+" "+clusterID, time.Second)
	if err != nil {
		return nil, nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	kv, err := js.KeyValue(ctx, "cluster-"+clusterID)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return kv, nc.Close, nil
}
