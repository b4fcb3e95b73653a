package main

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	cluster "github.com/ozanturksever/go-cluster"
)

// leaseRev is one revision of the lease key as an outside watcher saw it.
type leaseRev struct {
	rev    uint64
	lease  cluster.Lease
	seenAt time.Time
}

// leaseWatch follows the lease key of a cluster from its own connection,
// the way the nodes do, and stamps each revision as it arrives. Followers
// judge expiry from the moment they see a revision; on loopback they see
// it when this watcher does, give or take scheduling.
type leaseWatch struct {
	nc   *nats.Conn
	w    jetstream.KeyWatcher
	done chan struct{}

	mu   sync.Mutex
	revs []leaseRev
}

func watchLease(ctx context.Context, b *backend, clusterID string) (*leaseWatch, error) {
	nc, err := dial(b.urls, "bench lease watcher "+clusterID, time.Second)
	if err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, err
	}
	kv, err := js.KeyValue(ctx, "cluster-"+clusterID)
	if err != nil {
		nc.Close()
		return nil, err
	}
	w, err := kv.Watch(ctx, "lease")
	if err != nil {
		nc.Close()
		return nil, err
	}
	lw := &leaseWatch{nc: nc, w: w, done: make(chan struct{})}
	go lw.run()
	return lw, nil
}

func (lw *leaseWatch) run() {
	defer close(lw.done)
	for e := range lw.w.Updates() {
		if e == nil {
			continue
		}
		at := time.Now()
		r := leaseRev{rev: e.Revision(), seenAt: at}
		_ = json.Unmarshal(e.Value(), &r.lease)
		lw.mu.Lock()
		lw.revs = append(lw.revs, r)
		lw.mu.Unlock()
	}
}

// last returns the last revision seen that matches, if any.
func (lw *leaseWatch) last(match func(leaseRev) bool) (leaseRev, bool) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	for i := len(lw.revs) - 1; i >= 0; i-- {
		if match(lw.revs[i]) {
			return lw.revs[i], true
		}
	}
	return leaseRev{}, false
}

// first returns the first revision seen after t that matches, if any.
func (lw *leaseWatch) first(after time.Time, match func(leaseRev) bool) (leaseRev, bool) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	for _, r := range lw.revs {
		if r.seenAt.After(after) && match(r) {
			return r, true
		}
	}
	return leaseRev{}, false
}

func (lw *leaseWatch) close() {
	_ = lw.w.Stop()
	lw.nc.Close()
	<-lw.done
}
