package engine

// The driver's entry points: what package cluster calls, and the narrow
// interfaces it hands in (hooks, metrics).

import (
	"context"
	"time"

	"github.com/ozanturksever/go-cluster/internal/store"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// Hooks are the application's callbacks (cluster.Hooks has this method set).
type Hooks interface {
	OnBecomeLeader(ctx context.Context) error
	OnLoseLeadership(ctx context.Context) error
	OnLeaderChange(ctx context.Context, nodeID string) error
}

// noHooks are no hooks: for a nil Hooks.
type noHooks struct{}

func (noHooks) OnBecomeLeader(context.Context) error         { return nil }
func (noHooks) OnLoseLeadership(context.Context) error       { return nil }
func (noHooks) OnLeaderChange(context.Context, string) error { return nil }

func orNoHooks(h Hooks) Hooks {
	if h == nil {
		return noHooks{}
	}
	return h
}

// Metrics receives what the driver observes (cluster.Metrics, its cause
// and outcome as strings).
type Metrics interface {
	ObserveRenewal(outcome string, latency time.Duration)
	ObserveLeadership(leader bool, epoch int64)
	ObserveElection(cause string, wait time.Duration)
	ObserveLeader(leader string)
	ObserveHook(name string, d time.Duration, err error)
}

// epochKey keys the epoch in a tenure's ctx.
type epochKey struct{}

// EpochOf returns the epoch of the tenure whose ctx is ctx, or one derived
// from it, and false for any other ctx.
func EpochOf(ctx context.Context) (int64, bool) {
	epoch, ok := ctx.Value(epochKey{}).(int64)
	return epoch, ok
}

// Send hands c to the loop; ErrStopped once the loop has ended, ctx's
// error if it ends first. The answer comes on c's channels.
func (d *driver) Send(ctx context.Context, c command) error {
	select {
	case d.cmds <- c:
		return nil
	case <-d.exited:
		return wire.ErrStopped
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Exited is closed when the loop has ended.
func (d *driver) Exited() <-chan struct{} { return d.exited }

// Close aborts what is in flight: requests end, the loop exits (ending a
// live tenure as StopNow does), the readiness checks stop.
func (d *driver) Close() { d.abort() }

// Wait waits, after Close, for the loop, the requests, the readiness
// checks and every hook queued, then cancels the hooks' ctx. A readiness
// check that ignores its ctx holds it up.
func (d *driver) Wait() {
	<-d.exited
	d.requests.Wait() // base is cancelled: requests end at once
	<-d.checks
	d.disp.close()
	<-d.disp.done
	d.stopHooks()
}

// WaitWatches waits for the watches being stopped in the background:
// closing the connection ends them at once.
func (d *driver) WaitWatches() { d.cleanup.Wait() }

// StopHooks cancels the ctx of OnLeaderChange and OnLoseLeadership: a
// hook still running is told to hurry.
func (d *driver) StopHooks() { d.stopHooks() }

// Store is the store the driver writes through.
func (d *driver) Store() *store.Store { return d.store }
