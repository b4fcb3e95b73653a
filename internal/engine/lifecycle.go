package engine

// The engine's lifecycle: Start, Stop and what ends it.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/ozanturksever/go-cluster/internal/election"
	"github.com/ozanturksever/go-cluster/internal/presence"
	"github.com/ozanturksever/go-cluster/internal/store"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// Start connects (unless Config.Conn is set), opens the bucket, answers
// and announces the node, and starts the election. ctx bounds start-up
// only. A Stop during Start ends it (wire.ErrStopped). An Engine starts
// once (wire.ErrAlreadyStarted).
func (e *Engine) Start(ctx context.Context) error {
	e.mu.Lock()
	if e.started {
		stopped, err := e.stopped, e.err
		e.mu.Unlock()
		switch {
		case err != nil:
			return fmt.Errorf("start: %w: %w (it stopped: %w)", wire.ErrStopped, wire.ErrAlreadyStarted, err)
		case stopped:
			return fmt.Errorf("start: %w: %w", wire.ErrStopped, wire.ErrAlreadyStarted)
		}
		return fmt.Errorf("start: %w", wire.ErrAlreadyStarted)
	}
	e.started = true
	ctx, cancel := context.WithCancel(ctx)
	e.startCancel, e.startDone = cancel, make(chan struct{})
	startDone := e.startDone
	e.mu.Unlock()
	defer close(startDone)
	defer cancel()

	err := e.start(ctx)
	if err == nil {
		return nil
	}
	e.mu.Lock()
	if e.stopped && ctx.Err() != nil {
		err = fmt.Errorf("start: %w during start", wire.ErrStopped)
	}
	e.stopped = true
	e.err = err
	e.mu.Unlock()
	e.finish()
	return err
}

// campaigns says the node campaigns: an observer never does.
func (e *Engine) campaigns() bool { return !e.p.Observer }

// start does Start's I/O without the lock, then publishes what it made.
func (e *Engine) start(ctx context.Context) error {
	cfg := e.cfg
	nc, owns := cfg.Conn, false
	if nc == nil {
		var err error
		if nc, err = e.dial(ctx); err != nil {
			return err
		}
		owns = true
	}
	closeConn := func() {
		if owns {
			nc.Close()
		}
	}
	timeout := e.p.RequestTimeout
	var st *store.Store
	err := retryStartup(ctx, timeout, func(actx context.Context) (err error) {
		st, err = store.Open(actx, nc, e.api, cfg.ClusterID, e.bucket, timeout)
		return err
	})
	if err != nil {
		closeConn()
		return fmt.Errorf("start: %w", err)
	}
	if e.campaigns() {
		if err := e.readBucket(ctx, st); err != nil {
			closeConn()
			return fmt.Errorf("start: %w", err)
		}
	}
	if err := e.refuseDuplicate(ctx, nc); err != nil {
		closeConn()
		cfg.Log.Error("refusing to start: another process runs with this NodeID", "error", err)
		return fmt.Errorf("start: %w", err)
	}
	control := make(chan controlRequest, 16)
	// Answer status requests, then announce: an announced node answers.
	startedAt := time.Now()
	requests, err := e.subscribe(nc, control, startedAt)
	if err != nil {
		closeConn()
		return fmt.Errorf("start: %w", err)
	}
	var announced *presence.Announcement
	switch {
	case !e.campaigns(): // an observer is no member (subscribe)
	case st.KeepsMembersBucket():
		announced = presence.AnnounceInMembersBucket(ctx, st, e.bucket, e.self(startedAt), timeout, cfg.Log)
	default:
		announced = presence.Announce(ctx, st, e.bucket, e.self(startedAt), timeout, cfg.Log)
	}
	st.PaceWatch(e.p.RenewInterval)
	priority := int(e.priority.Load())
	d := newDriver(e.driverConfig(st, control, priority))

	e.mu.Lock()
	if e.stopped { // Stop came while we were starting
		e.mu.Unlock()
		requests.Stop()
		requests.Wait()
		d.Close()
		announced.Withdraw(timeout, cfg.Log)
		closeConn()
		return fmt.Errorf("start: %w during start", wire.ErrStopped)
	}
	e.nc, e.ownsConn, e.d, e.requests, e.announced = nc, owns, d, requests, announced
	e.mu.Unlock()
	d.Run()
	if p := int(e.priority.Load()); p != priority {
		e.SetPriority(p) // set while the driver was being made
	}
	cfg.Log.Info("node started", "observer", !e.campaigns(), "lease_ttl", e.p.LeaseTTL, "renew_interval", e.p.RenewInterval)
	return nil
}

// readBucket reads the bucket's election metadata, which a campaigning
// node needs: each read asked again within RequestTimeout, like the
// bucket's lookup, so that one lost request does not cost the whole Start.
func (e *Engine) readBucket(ctx context.Context, st *store.Store) error {
	st.ReadCeiling(cmp.Or(e.cfg.ProtocolHi, wire.ProtocolHi))
	var ttl time.Duration
	err := retryStartup(ctx, e.p.RequestTimeout, func(actx context.Context) error {
		meta, err := st.Campaignable(actx)
		ttl = meta.LeaseTTL
		if err == nil {
			err = st.FindMembersBucket(actx)
		}
		return err
	})
	if err != nil {
		return err
	}
	if ttl != e.p.LeaseTTL {
		e.cfg.Log.Info("the cluster's LeaseTTL is the bucket's: this node follows it", "bucket_lease_ttl", ttl, "config_lease_ttl", e.p.LeaseTTL)
	}
	e.bucketTTL.Store(int64(ttl))
	return nil
}

// driverConfig is what the driver takes of the engine, over the store st.
func (e *Engine) driverConfig(st *store.Store, control <-chan controlRequest, priority int) driverConfig {
	p := e.p
	p.Priority = priority
	var before func(election.Action)
	if e.cfg.BeforeAction != nil {
		before = func(a election.Action) { e.cfg.BeforeAction(a) }
	}
	return driverConfig{Params: p, DrainTimeout: p.DrainTimeout, RequestTimeout: p.RequestTimeout,
		StepDownOnHookError: e.cfg.StepDownOnHookError,
		ReadinessCheck:      e.cfg.ReadinessCheck, ReadinessInterval: e.cfg.ReadinessInterval,
		ReadinessThreshold: e.cfg.ReadinessThreshold,
		ClusterID:          e.cfg.ClusterID, Log: e.cfg.Log, Metrics: e.cfg.Metrics,
		Hooks: orNoHooks(e.cfg.Hooks), Events: orNoHooks(e.cfg.Events),
		view: e.view, Store: st, Control: control, Ended: e.ended, BeforeAction: before}
}

// subscribe answers step-down and status requests: a campaigning node
// only. An observer (a dashboard, the CLI's own for the state commands)
// is no member: it neither answers nor announces, so it never shows in
// `go-cluster status` and needs no permission for it.
func (e *Engine) subscribe(nc *nats.Conn, control chan<- controlRequest, startedAt time.Time) (*requestServer, error) {
	if !e.campaigns() {
		return nil, nil
	}
	return serveRequests(nc, e.self(startedAt), e.view.Now, control, e.presenceView)
}

// self is what this node says of itself to tools: in status replies and
// its member record.
func (e *Engine) self(startedAt time.Time) presence.Self {
	p := e.p
	return presence.Self{ClusterID: e.cfg.ClusterID, NodeID: p.NodeID, Instance: p.Instance, Metadata: p.Metadata, StartedAt: startedAt, ProtocolHi: p.ProtocolHi}
}

// presenceView is what a status reply says of the node's view: the
// tenure read once, so that its epoch is the one that leads.
func (e *Engine) presenceView() presence.View {
	t, v := e.Tenure(), e.view.snapshot()
	if t != nil {
		return presence.View{Leading: true, Leader: e.p.NodeID, Epoch: t.Epoch, Ready: v.Ready}
	}
	return presence.View{Leader: v.Leader, Epoch: v.Epoch, Ready: v.Ready}
}

// refuseDuplicate asks whether another process runs with this NodeID
// (presence.RefuseDuplicate): an observer writes nothing, so a twin costs
// nothing and it does not ask.
func (e *Engine) refuseDuplicate(ctx context.Context, nc *nats.Conn) error {
	if !e.campaigns() {
		return nil
	}
	p := e.p
	return presence.RefuseDuplicate(ctx, nc, e.cfg.ClusterID, p.NodeID, p.Instance, p.RequestTimeout)
}

// retryStartup runs a start-up step until it succeeds, fails permanently,
// or ctx ends. Each attempt gets RequestTimeout: a request lost with a
// connection that comes back at once is asked again, not waited for.
func retryStartup(ctx context.Context, timeout time.Duration, step func(context.Context) error) error {
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, timeout)
		err := step(actx)
		cancel()
		if err == nil || store.Classify(err) == election.Permanent || errors.Is(err, wire.ErrInvalidConfig) || ctx.Err() != nil {
			return err
		}
		select {
		case <-time.After(backoff(attempt, 20*time.Millisecond, timeout)):
		case <-ctx.Done():
			return err
		}
	}
}

// ended tears the engine down when the election ends, on its own
// (permanent error, err) or by Stop: the driver calls it on its loop's
// goroutine once the loop has ended (driverConfig.Ended).
func (e *Engine) ended(err error) {
	e.mu.Lock()
	if err != nil && e.err == nil {
		e.err = err
	}
	e.mu.Unlock()
	e.beginTeardown()
}

// Stop leaves the cluster: on the leader, the tenure ends, OnLoseLeadership
// runs while the node still renews, and the lease is released. It
// returns nil once no hook runs or will and the goroutines have ended;
// ctx's error if ctx ends first. Called from a hook (any node's) it
// starts the stop and returns wire.ErrCalledFromHook at once.
func (e *Engine) Stop(ctx context.Context) error {
	hook := inHook() // reads the stack: not under mu
	e.mu.Lock()
	if !e.started {
		e.mu.Unlock()
		return wire.ErrNotStarted
	}
	if hook {
		e.mu.Unlock()
		go func() { _ = e.Stop(context.Background()) }()
		return fmt.Errorf("stop: %w", wire.ErrCalledFromHook)
	}
	d, startDone, startCancel := e.d, e.startDone, e.startCancel
	if d == nil {
		// Start is in progress, or failed: end it and wait for it.
		e.stopped = true
		e.mu.Unlock()
		startCancel()
		select {
		case <-startDone:
		case <-ctx.Done():
			return fmt.Errorf("stop: %w", ctx.Err())
		}
		e.mu.Lock()
		d = e.d
		e.mu.Unlock()
		if d == nil {
			return nil
		}
	} else {
		e.mu.Unlock()
	}

	_ = d.Send(ctx, command{Kind: cmdStop, Reply: make(chan error, 1)})
	select {
	case <-d.Exited():
	case <-ctx.Done():
	}
	e.beginTeardown()
	select {
	case <-e.done:
		return nil
	case <-ctx.Done():
		d.StopHooks() // tell a hook still running to hurry
		return fmt.Errorf("stop: %w", ctx.Err())
	}
}

// beginTeardown ends the election and, once, starts finishTeardown.
func (e *Engine) beginTeardown() {
	e.mu.Lock()
	d, requests := e.d, e.requests
	first := d != nil && !e.tornDown
	if first {
		e.tornDown = true
	}
	e.stopped = true
	e.mu.Unlock()
	if !first {
		return
	}
	requests.Stop()
	d.Close() // in-flight requests abort; the loop exits
	go e.finishTeardown(d, requests)
}

// finishTeardown waits for the node's goroutines and hooks, then closes
// the connection the engine owns and closes Done.
func (e *Engine) finishTeardown(d *driver, requests *requestServer) {
	d.Wait() // a ReadinessCheck that ignores its ctx holds Done up here
	requests.Wait()
	e.mu.Lock()
	err := e.err
	e.mu.Unlock()
	if err == nil { // stopped, not failed: a failed node shows as down
		e.announced.Withdraw(e.p.RequestTimeout, e.cfg.Log)
	}
	if e.ownsConn {
		e.nc.Close() // also ends at once the requests of watches being stopped
		d.WaitWatches()
	}
	e.cfg.Log.Info("node stopped", "error", err)
	e.finish()
}

// finish tells the node's face, then closes Done, once.
func (e *Engine) finish() {
	e.doneOnce.Do(func() {
		if e.cfg.Ending != nil {
			e.cfg.Ending()
		}
		close(e.done)
	})
}

// runningLocked is nil once the engine has started and while it runs.
func (e *Engine) runningLocked() error {
	switch {
	case !e.started:
		return wire.ErrNotStarted
	case e.stopped:
		return wire.ErrStopped
	case e.d == nil:
		return errors.New("starting")
	}
	return nil
}
