package cluster

// The Node's lifecycle: Start, Stop and what ends it. No lock is held
// across I/O: Start and Stop take n.mu only to read or set fields, so the
// getters answer at once, and Stop can end a Start in progress.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"strings"

	"github.com/nats-io/nats.go"
	"github.com/ozanturksever/go-cluster/internal/bucketmeta"
	"github.com/ozanturksever/go-cluster/internal/driver"
	"github.com/ozanturksever/go-cluster/internal/election"
	"github.com/ozanturksever/go-cluster/internal/presence"
	"github.com/ozanturksever/go-cluster/internal/store"
)

// Start connects to NATS (unless Config.Conn is set), opens the bucket
// "cluster-<ClusterID>" (creating it when absent), starts watching the
// lease and begins to campaign. ctx bounds start-up only; the Node runs
// until Stop or a permanent error (see Done and Err); Run ties it to a
// ctx instead. A Stop during Start ends it: Start then returns an error
// wrapping ErrStopped. A Node starts once: a second Start returns an error
// wrapping ErrAlreadyStarted, and a Start after the node stopped (by Stop,
// a failed Start or a permanent error) one wrapping both ErrStopped and
// ErrAlreadyStarted, and the cause if it stopped on its own. A stopped
// Node is not restarted: make a new one.
func (n *Node) Start(ctx context.Context) error {
	n.mu.Lock()
	if n.started {
		stopped, err := n.stopped, n.err
		n.mu.Unlock()
		switch {
		case err != nil:
			return fmt.Errorf("start: %w: %w (it stopped: %w)", ErrStopped, ErrAlreadyStarted, err)
		case stopped:
			return fmt.Errorf("start: %w: %w", ErrStopped, ErrAlreadyStarted)
		}
		return fmt.Errorf("start: %w", ErrAlreadyStarted)
	}
	n.started = true
	ctx, cancel := context.WithCancel(ctx)
	n.startCancel, n.startDone = cancel, make(chan struct{})
	startDone := n.startDone
	n.mu.Unlock()
	defer close(startDone)
	defer cancel()

	err := n.start(ctx)
	if err == nil {
		return nil
	}
	n.mu.Lock()
	if n.stopped && ctx.Err() != nil {
		err = fmt.Errorf("start: %w during start", ErrStopped)
	}
	n.stopped = true
	n.err = err
	n.mu.Unlock()
	n.events.close()
	n.finish()
	return err
}

// start does Start's I/O without the lock, then publishes what it made.
func (n *Node) start(ctx context.Context) error {
	nc, owns := n.cfg.Conn, false
	if nc == nil {
		var err error
		if nc, err = n.dial(ctx); err != nil {
			return err
		}
		owns = true
	}
	closeConn := func() {
		if owns {
			nc.Close()
		}
	}
	var st *store.Store
	err := retryStartup(ctx, n.cfg.RequestTimeout, func(actx context.Context) (err error) {
		st, err = store.Open(actx, nc, n.cfg.jsAPI(), n.cfg.ClusterID, n.cfg.bucketOptions().storeOptions(), n.cfg.RequestTimeout)
		return err
	})
	if err != nil {
		closeConn()
		return fmt.Errorf("start: %w", err)
	}
	if n.campaign {
		st.ReadClusterMaxTTL()
		// Each read asked again within RequestTimeout, like the bucket's
		// lookup: one lost request must not cost the whole Start.
		var meta bucketmeta.Meta
		err := retryStartup(ctx, n.cfg.RequestTimeout, func(actx context.Context) (err error) {
			meta, err = st.Campaignable(actx)
			return err
		})
		if err != nil {
			closeConn()
			return fmt.Errorf("start: %w", err)
		}
		if meta.LeaseTTL != n.cfg.LeaseTTL {
			n.log.Info("the cluster's LeaseTTL is the bucket's: this node follows it", "bucket_lease_ttl", meta.LeaseTTL, "config_lease_ttl", n.cfg.LeaseTTL)
		}
		n.bucketTTL.Store(int64(meta.LeaseTTL))
	}
	if err := n.refuseDuplicate(ctx, nc); err != nil {
		closeConn()
		n.log.Error("refusing to start: another process runs with this NodeID", "error", err)
		return fmt.Errorf("start: %w", err)
	}
	control := make(chan driver.ControlRequest, 16)
	// Answer status requests, then announce: an announced node answers.
	startedAt := time.Now()
	subs, err := n.subscribe(nc, control, startedAt)
	if err != nil {
		closeConn()
		return fmt.Errorf("start: %w", err)
	}
	var announced *presence.Announcement
	if n.campaign { // an observer is no member (subscribe)
		announced = presence.Announce(ctx, st.JetStream(), n.cfg.bucketOptions().storeOptions(), n.self(startedAt), n.cfg.RequestTimeout, n.log)
	}
	priority := int(n.priority.Load())
	el := driver.New(n.driverConfig(st, control, priority))

	n.mu.Lock()
	if n.stopped { // Stop came while we were starting
		n.mu.Unlock()
		for _, s := range subs {
			_ = s.Unsubscribe()
		}
		el.Close()
		announced.Withdraw(n.cfg.RequestTimeout, n.log)
		closeConn()
		return fmt.Errorf("start: %w during start", ErrStopped)
	}
	n.nc, n.ownsConn, n.el, n.subs, n.announced = nc, owns, el, subs, announced
	n.mu.Unlock()
	el.Run()
	go n.supervise(el)
	if p := int(n.priority.Load()); p != priority {
		_ = n.SetPriority(p) // set while the driver was being made
	}
	n.log.Info("node started", "observer", !n.campaign, "lease_ttl", n.cfg.LeaseTTL, "renew_interval", n.cfg.RenewInterval)
	return nil
}

// driverConfig is what the driver takes of the node, over the store st.
func (n *Node) driverConfig(st *store.Store, control <-chan driver.ControlRequest, priority int) driver.Config {
	p := electionParams(n.cfg, n.campaign, n.instance)
	p.Priority = priority
	return driver.Config{Params: p, DrainTimeout: n.cfg.DrainTimeout, RequestTimeout: n.cfg.RequestTimeout,
		StepDownOnHookError: n.cfg.OnBecomeLeaderError == LeaderHookErrorStepsDown,
		ReadinessCheck:      n.cfg.ReadinessCheck, ReadinessInterval: n.cfg.ReadinessInterval,
		ReadinessThreshold: n.cfg.ReadinessThreshold,
		ClusterID:          n.cfg.ClusterID, Log: n.log, Metrics: n.cfg.Metrics, Hooks: n.hooks,
		View: n.view, Store: st, Control: control, BeforeAction: n.beforeAction}
}

// electionParams is what the machine reads of cfg (defaults applied).
func electionParams(cfg Config, campaign bool, instance string) election.Params {
	return election.Params{NodeID: cfg.NodeID, Instance: instance, Observer: !campaign,
		LeaseTTL: cfg.LeaseTTL, RenewInterval: cfg.RenewInterval, SafetyMargin: cfg.SafetyMargin,
		RequestTimeout: cfg.RequestTimeout, DrainTimeout: cfg.DrainTimeout, Cooldown: cfg.Cooldown,
		Priority: cfg.Priority, PreemptDelay: cfg.PreemptDelay, Metadata: cfg.Metadata,
		ReadinessCheck: cfg.ReadinessCheck != nil}
}

// subscribe answers step-down and status requests: a campaigning node
// only. An observer (a dashboard, the CLI's own for the state commands)
// is no member: it neither answers nor announces, so it never shows in
// `go-cluster status` and needs no permission for it.
func (n *Node) subscribe(nc *nats.Conn, control chan<- driver.ControlRequest, startedAt time.Time) ([]*nats.Subscription, error) {
	if !n.campaign {
		return nil, nil
	}
	subs, err := driver.SubscribeControl(nc, n.cfg.ClusterID, n.cfg.NodeID, n.view.Now, control)
	if err != nil {
		return nil, err
	}
	status, err := presence.Answer(nc, n.self(startedAt), n.presenceView)
	if err != nil {
		for _, s := range subs {
			_ = s.Unsubscribe()
		}
		return nil, err
	}
	return append(subs, status...), nil
}

// self is what this node says of itself to tools: in status replies and
// its member record.
func (n *Node) self(startedAt time.Time) presence.Self {
	return presence.Self{ClusterID: n.cfg.ClusterID, NodeID: n.cfg.NodeID, Instance: n.instance, Metadata: n.cfg.Metadata, StartedAt: startedAt}
}

// presenceView is what a status reply says of the node's view.
func (n *Node) presenceView() presence.View {
	t, v := n.tenure(), n.view.Snapshot()
	if t != nil { // one read of the tenure: its epoch is the one that leads
		return presence.View{Leading: true, Leader: n.cfg.NodeID, Epoch: t.Epoch, Ready: v.Ready}
	}
	return presence.View{Leader: v.Leader, Epoch: v.Epoch, Ready: v.Ready}
}

// refuseDuplicate asks whether another process runs with this NodeID
// (presence.RefuseDuplicate): an observer writes nothing, so a twin costs
// nothing and it does not ask.
func (n *Node) refuseDuplicate(ctx context.Context, nc *nats.Conn) error {
	if !n.campaign {
		return nil
	}
	return presence.RefuseDuplicate(ctx, nc, n.cfg.ClusterID, n.cfg.NodeID, n.instance, n.cfg.RequestTimeout)
}

// retryStartup runs a start-up step until it succeeds, fails permanently,
// or ctx ends. Each attempt gets RequestTimeout: a request lost with a
// connection that comes back at once is asked again, not waited for.
func retryStartup(ctx context.Context, timeout time.Duration, step func(context.Context) error) error {
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, timeout)
		err := step(actx)
		cancel()
		if err == nil || store.Classify(err) == election.Permanent || errors.Is(err, ErrInvalidConfig) || ctx.Err() != nil {
			return err
		}
		select {
		case <-time.After(backoff(attempt, 20*time.Millisecond, timeout)):
		case <-ctx.Done():
			return err
		}
	}
}

// supervise tears the Node down when the election ends on its own
// (permanent error).
func (n *Node) supervise(el *driver.Driver) {
	err := el.Err()
	n.mu.Lock()
	if err != nil && n.err == nil {
		n.err = err
	}
	n.mu.Unlock()
	n.beginTeardown()
}

// Stop leaves the cluster. On the leader it cancels the tenure, runs
// OnLoseLeadership (bounded by Config.DrainTimeout from when it begins)
// while still renewing, then releases the lease so that a follower takes
// over at once. When Stop returns nil no hook is running or will run, and
// the Node's goroutines have ended; every Stop, the first or a later one,
// keeps that promise. If ctx ends first, Stop abandons the graceful path
// and returns ctx's error; a hook still running is told through its ctx
// and left to finish on its own (Done closes when it has). Stop returns by
// its ctx even when NATS does not answer.
//
// Called from a hook, Stop cannot wait for hooks (it would wait for the
// one that called it): it starts the stop and returns at once with an
// error wrapping ErrCalledFromHook; the node stops after the hook returns.
func (n *Node) Stop(ctx context.Context) error {
	if n.inHook() {
		go func() { _ = n.Stop(context.Background()) }()
		return fmt.Errorf("stop: %w", ErrCalledFromHook)
	}
	n.mu.Lock()
	if !n.started {
		n.mu.Unlock()
		return ErrNotStarted
	}
	el, startDone, startCancel := n.el, n.startDone, n.startCancel
	if el == nil {
		// Start is in progress, or failed: end it and wait for it.
		n.stopped = true
		n.mu.Unlock()
		startCancel()
		select {
		case <-startDone:
		case <-ctx.Done():
			return fmt.Errorf("stop: %w", ctx.Err())
		}
		n.mu.Lock()
		el = n.el
		n.mu.Unlock()
		if el == nil {
			return nil
		}
	} else {
		n.mu.Unlock()
	}

	_ = el.Send(ctx, driver.Command{Kind: driver.CmdStop, Reply: make(chan error, 1)})
	select {
	case <-el.Exited():
	case <-ctx.Done():
	}
	n.beginTeardown()
	select {
	case <-n.done:
		return nil
	case <-ctx.Done():
		el.StopHooks() // tell a hook still running to hurry
		return fmt.Errorf("stop: %w", ctx.Err())
	}
}

// beginTeardown ends the election and, once, starts finishTeardown.
func (n *Node) beginTeardown() {
	n.mu.Lock()
	el := n.el
	first := el != nil && !n.tornDown
	if first {
		n.tornDown = true
	}
	n.stopped = true
	n.mu.Unlock()
	if !first {
		return
	}
	for _, s := range n.subs {
		_ = s.Unsubscribe()
	}
	el.Close() // in-flight requests abort; the loop exits
	go n.finishTeardown(el)
}

// finishTeardown waits for the node's goroutines and hooks, then closes
// the connection the Node owns and closes Done.
func (n *Node) finishTeardown(el *driver.Driver) {
	el.Wait() // a ReadinessCheck that ignores its ctx holds Done up here
	n.events.close()
	if n.Err() == nil { // stopped, not failed: a failed node shows as down
		n.announced.Withdraw(n.cfg.RequestTimeout, n.log)
	}
	if n.ownsConn {
		n.nc.Close() // also ends at once the requests of watches being stopped
		el.WaitWatches()
	}
	n.log.Info("node stopped", "error", n.Err())
	n.finish()
}

// finish closes Done, once.
func (n *Node) finish() { n.doneOnce.Do(func() { close(n.done) }) }

// inHook says the caller runs on this node's hook dispatcher.
func (n *Node) inHook() bool {
	n.mu.Lock()
	el := n.el
	n.mu.Unlock()
	return el != nil && el.InHook()
}

// backoff is capped exponential backoff with full jitter over its upper half.
func backoff(attempt int, base, limit time.Duration) time.Duration {
	d := base << min(attempt-1, 16)
	if d <= 0 || d > limit {
		d = limit
	}
	return d/2 + rand.N(d/2+1)
}

// dial connects with every URL, the credentials and the caller's options.
func (n *Node) dial(ctx context.Context) (*nats.Conn, error) {
	opts := nats.GetDefaultOptions()
	opts.Servers = n.cfg.NATSURLs
	opts.Name = fmt.Sprintf("go-cluster %s/%s", n.cfg.ClusterID, n.cfg.NodeID)
	opts.MaxReconnect = -1
	opts.ReconnectWait = 250 * time.Millisecond
	opts.ReconnectJitter = 100 * time.Millisecond
	opts.PingInterval = max(n.cfg.RenewInterval, time.Second)
	opts.MaxPingsOut = 3
	// Timeout bounds each dial and handshake, reconnects included, and
	// nats.go holds the connection's lock through a reconnect handshake:
	// every request waits behind it, whatever its ctx. A server that
	// accepts but does not answer (a blackholed link) must not stall
	// renewals past their deadline, so it is kept to RequestTimeout (the
	// first dial is bounded by Start's ctx below as well).
	opts.Timeout = min(max(n.cfg.RequestTimeout, 100*time.Millisecond), nats.DefaultTimeout)
	if n.cfg.NATSCredentials != "" {
		if err := nats.UserCredentials(n.cfg.NATSCredentials)(&opts); err != nil {
			return nil, fmt.Errorf("start: %w: NATSCredentials: %w", ErrInvalidConfig, err)
		}
	}
	for _, o := range n.cfg.NATSOptions {
		if err := o(&opts); err != nil {
			return nil, fmt.Errorf("start: %w: NATSOptions: %w", ErrInvalidConfig, err)
		}
	}
	type result struct {
		nc  *nats.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		nc, err := opts.Connect()
		ch <- result{nc, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, fmt.Errorf("start: %w (%s): %w", ErrConnect, strings.Join(n.cfg.NATSURLs, ","), r.err)
		}
		return r.nc, nil
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.nc != nil {
				r.nc.Close()
			}
		}()
		return nil, fmt.Errorf("start: %w: %w", ErrConnect, ctx.Err())
	}
}
