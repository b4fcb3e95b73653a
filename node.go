package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// Node is one member of a cluster. Make it with NewNode (campaigns for
// leadership) or NewObserver (follows the leader, never campaigns), then
// Start it. All methods are safe for concurrent use. A Node is used once:
// after Stop, make a new one.
type Node struct {
	cfg      Config
	hooks    Hooks
	campaign bool
	log      *slog.Logger
	view     *view

	mu       sync.Mutex
	started  bool
	stopped  bool
	nc       *nats.Conn
	ownsConn bool
	el       *election
	cancel   context.CancelFunc // aborts in-flight KV requests
	subs     []*nats.Subscription
	checks   chan struct{}      // closed when the health-check goroutine ends
	hookStop context.CancelFunc // cancels the ctx given to OnLeaderChange/OnLoseLeadership
	done     chan struct{}
	err      error
}

// NewNode validates cfg and returns a Node that campaigns for leadership
// once started. hooks may be nil.
func NewNode(cfg Config, hooks Hooks) (*Node, error) {
	return newNode(cfg, hooks, true)
}

// NewObserver returns a Node that follows the cluster's leader and reports
// changes through hooks.OnLeaderChange, but never campaigns: it never
// becomes leader and sends no KV writes. Useful for dashboards, proxies
// and tools.
func NewObserver(cfg Config, hooks Hooks) (*Node, error) {
	return newNode(cfg, hooks, false)
}

func newNode(cfg Config, hooks Hooks, campaign bool) (*Node, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if hooks == nil {
		hooks = NoOpHooks{}
	}
	return &Node{
		cfg:      cfg,
		hooks:    hooks,
		campaign: campaign,
		log:      cfg.Logger.With("cluster", cfg.ClusterID, "node", cfg.NodeID),
		view:     newView(),
		done:     make(chan struct{}),
	}, nil
}

// Start connects to NATS (unless Config.Conn is set), opens the bucket
// "cluster-<ClusterID>" (creating it when absent), starts watching the
// lease and begins to campaign. ctx bounds start-up only; the Node runs
// until Stop or a permanent error (see Done and Err).
func (n *Node) Start(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.started {
		return ErrAlreadyStarted
	}
	n.started = true

	nc, owns := n.cfg.Conn, false
	if nc == nil {
		var err error
		if nc, err = n.dial(ctx); err != nil {
			n.stopped = true
			close(n.done)
			return err
		}
		owns = true
	}
	fail := func(err error) error {
		if owns {
			nc.Close()
		}
		n.stopped = true
		n.err = err
		close(n.done)
		return err
	}
	var st *store
	err := retryStartup(ctx, n.cfg.RequestTimeout, func(actx context.Context) (err error) {
		st, err = openStore(actx, nc, bucketName(n.cfg.ClusterID), n.cfg.BucketReplicas, n.cfg.RequestTimeout)
		return err
	})
	if err != nil {
		return fail(fmt.Errorf("start: %w", err))
	}
	base, cancel := context.WithCancel(context.Background())
	var watcher *leaseWatch
	err = retryStartup(ctx, n.cfg.RequestTimeout, func(actx context.Context) (err error) {
		timeout := n.cfg.RequestTimeout
		if d, ok := actx.Deadline(); ok {
			timeout = time.Until(d)
		}
		watcher, err = st.watch(base, timeout)
		return err
	})
	if err != nil {
		cancel()
		return fail(fmt.Errorf("start: watch lease: %w", err))
	}

	control := make(chan controlRequest, 16)
	var subs []*nats.Subscription
	if n.campaign {
		if subs, err = subscribeControl(nc, n.cfg, control); err != nil {
			_ = watcher.Stop()
			cancel()
			return fail(fmt.Errorf("start: %w", err))
		}
	}
	hookCtx, hookStop := context.WithCancel(context.Background())
	el := &election{
		cfg:        n.cfg,
		log:        n.log,
		store:      st,
		campaign:   n.campaign,
		hooks:      n.hooks,
		disp:       newDispatcher(n.log, n.cfg.Observer),
		view:       n.view,
		cmds:       make(chan command),
		control:    control,
		health:     make(chan error),
		expired:    make(chan struct{}, 1),
		exited:     make(chan struct{}),
		base:       base,
		hookCtx:    hookCtx,
		watcher:    watcher,
		reconnects: nc.Stats().Reconnects,
	}
	n.nc, n.ownsConn, n.el, n.cancel, n.hookStop, n.subs = nc, owns, el, cancel, hookStop, subs
	n.checks = make(chan struct{})
	if n.cfg.HealthCheck != nil {
		go func() {
			defer close(n.checks)
			runHealthChecks(base, n.cfg, el.health)
		}()
	} else {
		close(n.checks)
	}
	go el.run()
	go n.supervise(el)
	n.log.Info("node started", "observer", !n.campaign, "lease_ttl", n.cfg.LeaseTTL, "renew_interval", n.cfg.RenewInterval)
	return nil
}

// retryStartup runs a start-up step until it succeeds, fails permanently,
// or ctx ends. Each attempt gets RequestTimeout: a request lost with a
// connection that comes back at once is asked again, not waited for.
func retryStartup(ctx context.Context, timeout time.Duration, step func(context.Context) error) error {
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, timeout)
		err := step(actx)
		cancel()
		if err == nil || classify(err) == classPermanent || errors.Is(err, ErrInvalidConfig) || ctx.Err() != nil {
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
func (n *Node) supervise(el *election) {
	<-el.exited
	n.mu.Lock()
	if el.err != nil && n.err == nil {
		n.err = el.err
	}
	n.mu.Unlock()
	_ = n.teardown(context.Background())
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
	if d, ok := ctx.Deadline(); ok {
		opts.Timeout = max(time.Until(d), time.Millisecond)
	}
	if n.cfg.NATSCredentials != "" {
		if err := nats.UserCredentials(n.cfg.NATSCredentials)(&opts); err != nil {
			return nil, fmt.Errorf("start: NATSCredentials: %w", err)
		}
	}
	for _, o := range n.cfg.NATSOptions {
		if err := o(&opts); err != nil {
			return nil, fmt.Errorf("start: NATSOptions: %w", err)
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
			return nil, fmt.Errorf("start: connect to %s: %w", strings.Join(n.cfg.NATSURLs, ","), r.err)
		}
		return r.nc, nil
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.nc != nil {
				r.nc.Close()
			}
		}()
		return nil, fmt.Errorf("start: connect: %w", ctx.Err())
	}
}

// Stop leaves the cluster. On the leader it cancels the tenure, runs
// OnLoseLeadership (bounded by Config.DrainTimeout) while still renewing,
// then releases the lease so that a follower takes over at once. When Stop
// returns nil no hook is running or will run, and the Node's goroutines
// have ended. If ctx ends first, Stop abandons the graceful path and
// returns ctx's error; a hook still running is left to finish on its own.
func (n *Node) Stop(ctx context.Context) error {
	n.mu.Lock()
	if !n.started {
		n.mu.Unlock()
		return ErrNotStarted
	}
	el := n.el
	n.mu.Unlock()

	if el != nil {
		reply := make(chan error, 1)
		select {
		case el.cmds <- command{kind: cmdStop, reply: reply}:
		case <-el.exited:
		case <-ctx.Done():
		}
		select {
		case <-el.exited:
		case <-ctx.Done():
		}
	}

	return n.teardown(ctx)
}

// teardown ends the election and the dispatcher, then closes the
// connection the Node owns. It runs once; a second caller waits for the
// first. No lock is held while waiting, so hooks may call the Node.
func (n *Node) teardown(ctx context.Context) error {
	n.mu.Lock()
	if n.stopped {
		n.mu.Unlock()
		select {
		case <-n.done:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("stop: %w", ctx.Err())
		}
	}
	n.stopped = true
	el := n.el
	n.mu.Unlock()
	defer close(n.done)

	for _, s := range n.subs {
		_ = s.Unsubscribe()
	}
	n.cancel()
	<-el.exited // quick once base is cancelled: in-flight requests abort
	<-n.checks  // a HealthCheck that ignores its ctx holds Stop up here
	el.disp.close()
	var err error
	select {
	case <-el.disp.done:
	case <-ctx.Done():
		err = fmt.Errorf("stop: waiting for hooks: %w", ctx.Err())
	}
	n.hookStop()
	if n.ownsConn {
		n.nc.Close()
	}
	n.log.Info("node stopped", "error", n.Err())
	return err
}

// StepDown gives up leadership: the tenure ctx is cancelled,
// OnLoseLeadership runs, then the lease is released and a follower takes
// over. This node does not campaign again for Config.Cooldown. It returns
// when the lease is released (or could not be, in which case followers take
// over when it expires), ErrNotLeader if this node is not the leader.
func (n *Node) StepDown(ctx context.Context) error { return n.stepDown(ctx, "") }

func (n *Node) stepDown(ctx context.Context, to string) error {
	reply := make(chan error, 1)
	if err := n.send(ctx, command{kind: cmdStepDown, reply: reply, to: to}); err != nil {
		return err
	}
	select {
	case err := <-reply:
		if err != nil {
			return fmt.Errorf("step down: %w", err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("step down: %w", ctx.Err())
	}
}

// StepDownTo steps down like StepDown and names the successor: the
// released record carries nodeID, and for one RenewInterval only that node
// campaigns; if it does not take the lease by then, any node may. It is
// the API behind remote handover (see ControlSubject).
func (n *Node) StepDownTo(ctx context.Context, nodeID string) error {
	if err := ValidateIdentifier("nodeID", nodeID); err != nil {
		return fmt.Errorf("step down: %w", err)
	}
	if nodeID == n.cfg.NodeID {
		return fmt.Errorf("step down: %w: cannot hand over to itself", ErrInvalidConfig)
	}
	return n.stepDown(ctx, nodeID)
}

// ValidateLeadership proves, right now, that this node holds the lease, by
// renewing it with a compare-and-swap, and returns the epoch to pass to a
// fenced resource. Call it before a critical operation. A read could be
// answered by a stale replica; only a successful write proves tenure.
// Errors wrap ErrNotLeader, ErrLeaseExpired or ErrEpochMismatch.
func (n *Node) ValidateLeadership(ctx context.Context) (int64, error) {
	epoch, err := n.validateLeadership(ctx)
	n.cfg.Observer.ObserveFencing(err)
	return epoch, err
}

func (n *Node) validateLeadership(ctx context.Context) (int64, error) {
	reply, epoch := make(chan error, 1), make(chan int64, 1)
	if err := n.send(ctx, command{kind: cmdValidate, reply: reply, epoch: epoch}); err != nil {
		return 0, err
	}
	select {
	case e := <-epoch:
		return e, nil
	case err := <-reply:
		return 0, fmt.Errorf("validate leadership: %w", err)
	case <-ctx.Done():
		return 0, fmt.Errorf("validate leadership: %w", ctx.Err())
	}
}

// send hands a command to the election loop.
func (n *Node) send(ctx context.Context, c command) error {
	n.mu.Lock()
	started, el := n.started, n.el
	n.mu.Unlock()
	if !started {
		return ErrNotStarted
	}
	if el == nil {
		return ErrStopped
	}
	if !n.campaign && c.kind != cmdStop {
		return ErrObserver
	}
	select {
	case el.cmds <- c:
		return nil
	case <-el.exited:
		return ErrStopped
	case <-ctx.Done():
		return ctx.Err()
	}
}

// WaitForLeader blocks until some node (maybe this one) is known to lead,
// and returns its NodeID. It fails with ctx's error, or ErrStopped.
func (n *Node) WaitForLeader(ctx context.Context) (string, error) {
	return n.view.waitLeader(ctx, n.done)
}

// Role returns RolePrimary while this node's tenure is live.
func (n *Node) Role() Role {
	if n.IsLeader() {
		return RolePrimary
	}
	return RolePassive
}

// IsLeader reports whether this node holds a live tenure: it acquired the
// lease and its own deadline (last successful renewal sent + LeaseTTL -
// SafetyMargin) has not passed.
func (n *Node) IsLeader() bool { return n.view.leading(time.Now()) }

// Leader returns the NodeID of the current leader as this node knows it,
// or "" when nobody holds the lease (released, or expired on this node's
// clock) or it is not known yet.
func (n *Node) Leader() string {
	n.view.mu.RLock()
	defer n.view.mu.RUnlock()
	return n.view.leader
}

// Epoch returns this node's epoch while it leads; otherwise the epoch of
// the last lease record it saw; 0 if none.
func (n *Node) Epoch() int64 {
	n.view.mu.RLock()
	defer n.view.mu.RUnlock()
	return n.view.epoch
}

// Lease returns the last valid lease record this node saw, and false if it
// has seen none. For display: never decide leadership from it.
func (n *Node) Lease() (Lease, bool) {
	n.view.mu.RLock()
	defer n.view.mu.RUnlock()
	return n.view.lease, n.view.hasRec
}

// NodeID returns the node's ID.
func (n *Node) NodeID() string { return n.cfg.NodeID }

// ClusterID returns the cluster's ID.
func (n *Node) ClusterID() string { return n.cfg.ClusterID }

// Config returns the configuration in use, with defaults applied.
func (n *Node) Config() Config { return n.cfg }

// Conn returns the NATS connection in use, or nil before Start. Add-ons
// (health) can share it.
func (n *Node) Conn() *nats.Conn {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.nc
}

// Done is closed when the Node has stopped, by Stop or by a permanent
// error (see Err).
func (n *Node) Done() <-chan struct{} { return n.done }

// Err returns why the Node stopped on its own: an error wrapping
// ErrBucketDeleted, ErrPermissionDenied or another permanent cause. It is
// nil while running and after a plain Stop.
func (n *Node) Err() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.err
}

// HookFailures returns how many hook calls returned an error or panicked.
func (n *Node) HookFailures() int64 {
	n.mu.Lock()
	el := n.el
	n.mu.Unlock()
	if el == nil {
		return 0
	}
	return el.disp.failures.Load()
}
