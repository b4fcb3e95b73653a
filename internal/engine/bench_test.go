package engine

// Micro-benchmarks of the driver's hot paths, with allocations:
//
//	go test -run '^$' -bench . -benchmem ./internal/engine

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/election"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// benchRecord is a held lease record of nodeID as a leader writes it.
func benchRecord(nodeID string) []byte {
	now := time.Now()
	return wire.Lease{NodeID: nodeID, Epoch: 42, AcquiredAt: now.Add(-time.Hour).UTC(), ExpiresAt: now.Add(10 * time.Second).UTC(),
		TTLMillis: 10000, Version: wire.Protocol}.Encode()
}

// noMetrics observes nothing.
type noMetrics struct{}

func (noMetrics) ObserveRenewal(string, time.Duration)     {}
func (noMetrics) ObserveLeadership(bool, int64)            {}
func (noMetrics) ObserveElection(string, time.Duration)    {}
func (noMetrics) ObserveLeader(string)                     {}
func (noMetrics) ObserveHook(string, time.Duration, error) {}

// benchFollower is the driver of a follower, without NATS: enough to
// hand the machine a watch entry, carry out what it returns and publish
// the view, which is what every watch event costs.
func benchFollower(b *testing.B, hooks Hooks) *driver {
	log := slog.New(slog.DiscardHandler)
	cfg := driverConfig{Params: election.Params{NodeID: "node-2", LeaseTTL: 10 * time.Second, RenewInterval: 2500 * time.Millisecond,
		SafetyMargin: time.Second, RequestTimeout: time.Second, DrainTimeout: 5 * time.Second, Cooldown: 5 * time.Second},
		ClusterID: "bench", Log: log, Metrics: noMetrics{}}
	disp := newDispatcher(log, noMetrics{})
	go disp.run()
	b.Cleanup(func() { disp.close(); <-disp.done })
	d := &driver{cfg: cfg, log: log, view: newNodeView("node-2", nil, nil), disp: disp, hooks: hooks, hookCtx: context.Background(),
		m: election.New(cfg.Params, 1), timer: time.NewTimer(time.Hour)}
	b.Cleanup(func() { d.timer.Stop() })
	d.carryOut(d.m.Handle(time.Now(), election.Synced{}))
	return d
}

// observe hands the follower's machine one watch entry and publishes.
func (d *driver) benchObserve(ent election.KVEntry) {
	d.carryOut(d.m.Handle(time.Now(), election.Entry{KV: ent}))
	d.publish()
}

// BenchmarkWatchRenewal is what a follower does for each renewal it sees
// on the watch: decode the record, note when it first saw the revision, and
// publish its view. The leader does not change, so no hook is queued.
func BenchmarkWatchRenewal(b *testing.B) {
	e := benchFollower(b, noHooks{})
	data := benchRecord("node-1")
	rev := uint64(1)
	b.ReportAllocs()
	for b.Loop() {
		rev++
		e.benchObserve(election.KVEntry{Rev: rev, Value: data})
	}
	if e.view.snapshot().Leader != "node-1" {
		b.Fatalf("leader %q, want node-1", e.view.snapshot().Leader)
	}
}

// BenchmarkWatchLeaderChange is a watch event that changes the leader:
// observe, publish, and queue OnLeaderChange to the dispatcher, which runs
// it on its own goroutine.
func BenchmarkWatchLeaderChange(b *testing.B) {
	e := benchFollower(b, noHooks{})
	var data [2][]byte
	for i, id := range []string{"node-1", "node-3"} {
		data[i] = benchRecord(id)
	}
	rev := uint64(1)
	b.ReportAllocs()
	for b.Loop() {
		rev++
		e.benchObserve(election.KVEntry{Rev: rev, Value: data[rev%2]})
	}
}

// BenchmarkHookDispatch is one hook handed to the dispatcher goroutine and
// waited for: the latency a hook adds to a handover.
func BenchmarkHookDispatch(b *testing.B) {
	d := newDispatcher(slog.New(slog.DiscardHandler), noMetrics{})
	go d.run()
	defer func() { d.close(); <-d.done }()
	fn := func() error { return nil }
	b.ReportAllocs()
	for b.Loop() {
		done := make(chan struct{})
		d.enqueue(hookCall{name: "OnBecomeLeader", fn: fn, done: done})
		<-done
	}
}

// BenchmarkHookDispatchQueued is the dispatcher's throughput: hooks queued
// back to back, as a burst of watch events would queue them.
func BenchmarkHookDispatchQueued(b *testing.B) {
	d := newDispatcher(slog.New(slog.DiscardHandler), noMetrics{})
	go d.run()
	defer func() { d.close(); <-d.done }()
	fn := func() error { return nil }
	b.ReportAllocs()
	for b.Loop() {
		d.enqueue(hookCall{name: "OnLeaderChange", fn: fn})
	}
	done := make(chan struct{})
	d.enqueue(hookCall{name: "last", fn: fn, done: done})
	<-done
}
