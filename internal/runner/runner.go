package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
)

// Environment variables the command gets.
const (
	EnvCluster = "GO_CLUSTER_CLUSTER"
	EnvNode    = "GO_CLUSTER_NODE"
	EnvEpoch   = "GO_CLUSTER_EPOCH"
	EnvSlot    = "GO_CLUSTER_SLOT"
)

// ErrConfig is wrapped by the errors of New about its Config.
var ErrConfig = errors.New("invalid runner config")

// ErrLeadTimeout is returned by Run when the command did not start within
// Config.LeadTimeout.
var ErrLeadTimeout = errors.New("not leading within the timeout")

// Config configures a Runner.
type Config struct {
	// Node configures the election: ClusterID, NodeID, the connection,
	// LeaseTTL and the rest. Its hooks are the Runner's.
	Node cluster.Config
	// Argv is the command and its arguments; not run through a shell.
	Argv []string
	// Env is added to the command's environment, after this process's
	// own and before the GO_CLUSTER_* variables.
	Env []string
	// Stdio is where the command's standard streams go.
	Stdio Stdio
	// Grace is how long the command has between SIGTERM and SIGKILL. It
	// must leave room for two renewals to be missed: at most MaxGrace of
	// the node's timings. Zero means MaxGrace.
	Grace time.Duration
	// Once makes Run return after the command's first run, even when it
	// ended because leadership was lost. Otherwise Run then waits to lead
	// again and runs the command anew.
	Once bool
	// Signals are passed on to the command's process group while it runs.
	// SIGINT, SIGTERM, SIGHUP and SIGQUIT received while no command runs
	// make Run return. Optional.
	Signals <-chan os.Signal
	// Logger receives the Runner's logs. Default slog.Default().
	Logger *slog.Logger
	// Slots is how many commands of the cluster may run at once (a
	// semaphore, consul lock's -n): slot k is the election of the cluster
	// SlotClusterID(Node.ClusterID, k), the Runner campaigns in every slot
	// and runs the command in the first it wins, staying out of the
	// others meanwhile (their nodes are not ready). 0 means 1, at most
	// MaxSlots; every Runner of the cluster must use the same.
	Slots int
	// LeadTimeout, if positive, makes Run give up with ErrLeadTimeout
	// when the command has not started within it (reaching NATS
	// included). It bounds the first start only.
	LeadTimeout time.Duration
}

// KillLead is how long before the tenure's deadline the command gets
// SIGKILL when renewals stop landing: half the SafetyMargin.
func KillLead(c cluster.Config) time.Duration { return c.SafetyMargin / 2 }

// MaxGrace is the longest Grace that the timings of c (with defaults
// applied, as cluster.Node.Config returns them) allow: the SIGTERM, sent
// Grace + KillLead before the tenure's deadline, must not come while
// renewals land on time. A renewal is sent every RenewInterval and moves
// the deadline to LeaseTTL - SafetyMargin after it was sent; two may be
// missed before the command is stopped.
func MaxGrace(c cluster.Config) time.Duration {
	return c.LeaseTTL - c.SafetyMargin - 2*c.RenewInterval - KillLead(c)
}

// Runner runs a command while its node leads. Use New, then Run once.
type Runner struct {
	cfg   Config
	slots int
	nodes []*cluster.Node // slot k's is nodes[k-1]
	ncfg  cluster.Config  // slot 1's node's, with defaults (the timings of all)
	log   *slog.Logger
	grace time.Duration

	wake chan struct{} // a tenure was queued; capacity 1
	quit chan struct{} // closed when Run returns

	mu      sync.Mutex
	pending []*tenure       // queued by OnBecomeLeader, taken by Run in order
	current map[int]*tenure // per slot: the tenure OnLoseLeadership waits for
	busy    int             // the slot whose tenure runs the command, 0 for none
}

// New checks cfg and makes the Runner and its Node; the Node is started by
// Run.
func New(cfg Config) (*Runner, error) {
	if len(cfg.Argv) == 0 {
		return nil, fmt.Errorf("%w: no command to run", ErrConfig)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Node.Logger == nil {
		cfg.Node.Logger = cfg.Logger
	}
	switch {
	case cfg.Slots < 0 || cfg.Slots > MaxSlots:
		return nil, fmt.Errorf("%w: slots %d: want 1 to %d", ErrConfig, cfg.Slots, MaxSlots)
	case cfg.LeadTimeout < 0:
		return nil, fmt.Errorf("%w: lead timeout %v is negative", ErrConfig, cfg.LeadTimeout)
	}
	r := &Runner{cfg: cfg, slots: max(cfg.Slots, 1), log: cfg.Logger, wake: make(chan struct{}, 1), quit: make(chan struct{}),
		current: map[int]*tenure{}}
	for k := 1; k <= r.slots; k++ {
		node, err := r.newSlotNode(k)
		if err != nil {
			return nil, err
		}
		r.nodes = append(r.nodes, node)
	}
	r.ncfg = r.nodes[0].Config()
	limit := MaxGrace(r.ncfg)
	if limit <= 0 {
		return nil, fmt.Errorf("%w: LeaseTTL %v leaves no time to stop the command (it must exceed SafetyMargin %v + 2 x RenewInterval %v + %v)",
			ErrConfig, r.ncfg.LeaseTTL, r.ncfg.SafetyMargin, r.ncfg.RenewInterval, KillLead(r.ncfg))
	}
	switch {
	case cfg.Grace < 0:
		return nil, fmt.Errorf("%w: grace %v is negative", ErrConfig, cfg.Grace)
	case cfg.Grace > limit:
		return nil, fmt.Errorf("%w: grace %v is longer than LeaseTTL %v allows (at most %v: LeaseTTL - SafetyMargin - 2 x RenewInterval - %v); raise the TTL or shorten the grace",
			ErrConfig, cfg.Grace, r.ncfg.LeaseTTL, limit, KillLead(r.ncfg))
	case cfg.Grace == 0:
		r.grace = limit
	default:
		r.grace = cfg.Grace
	}
	return r, nil
}

// Node is the Runner's node of slot 1, for status and tests.
func (r *Runner) Node() *cluster.Node { return r.nodes[0] }

// SlotNode is the Runner's node of slot k (1-based), for status and tests.
func (r *Runner) SlotNode(k int) *cluster.Node { return r.nodes[k-1] }

// Grace is the grace in use.
func (r *Runner) Grace() time.Duration { return r.grace }

// Run starts the node and runs the command each time it leads, until the
// command exits on its own (or, with Once, after its first run), a
// terminating signal arrives while no command runs, ctx ends, or the node
// stops. It returns the command's exit status (128 + the signal number
// when a signal ended it or Run) and stops the node, releasing the lease.
// An error means the node could not start or stopped on its own.
func (r *Runner) Run(ctx context.Context) (int, error) {
	defer close(r.quit)
	var giveUp <-chan time.Time
	if r.cfg.LeadTimeout > 0 {
		t := time.NewTimer(r.cfg.LeadTimeout)
		defer t.Stop()
		giveUp = t.C
	}
	err := r.start(ctx, giveUp)
	code := 1
	if err == nil {
		code, err = r.loop(ctx, giveUp)
	}
	r.stopNodes()
	return code, err
}

// leadTimeout is the error of a Run that gave up at its LeadTimeout.
func (r *Runner) leadTimeout() error {
	return fmt.Errorf("%w: the command did not start within %v", ErrLeadTimeout, r.cfg.LeadTimeout)
}

// retryConnect is how long Run waits before it tries again to reach NATS.
const retryConnect = 2 * time.Second

// start starts the nodes of every slot. While no NATS server can be
// reached it says so and tries again with new nodes (a Node starts once);
// a terminating signal, giveUp or ctx ends the wait. Nodes that started
// are stopped by Run.
func (r *Runner) start(ctx context.Context, giveUp <-chan time.Time) error {
	for k := 1; k <= r.slots; {
		err := r.startOnce(ctx, r.nodes[k-1], giveUp)
		if err == nil {
			k++
			continue
		}
		if !errors.Is(err, cluster.ErrConnect) {
			return err
		}
		r.log.Warn("cannot reach NATS; trying again", "err", err, "in", retryConnect)
		t := time.NewTimer(retryConnect)
		select {
		case <-t.C:
		case sig := <-r.cfg.Signals:
			t.Stop()
			if s, ok := terminating(sig); ok {
				return fmt.Errorf("start: interrupted by %v: %w", s, err)
			}
		case <-giveUp:
			t.Stop()
			return r.leadTimeout()
		case <-ctx.Done():
			t.Stop()
			return err
		}
		if r.nodes[k-1], err = r.newSlotNode(k); err != nil {
			return err
		}
	}
	return nil
}

// startOnce starts node; a terminating signal or giveUp ends a start
// that waits on NATS.
func (r *Runner) startOnce(ctx context.Context, node *cluster.Node, giveUp <-chan time.Time) error {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	started := make(chan error, 1)
	go func() { started <- node.Start(sctx) }()
	for {
		select {
		case err := <-started:
			return err
		case <-giveUp:
			cancel()
			<-started
			return r.leadTimeout()
		case sig := <-r.cfg.Signals:
			if s, ok := terminating(sig); ok {
				cancel()
				<-started
				return fmt.Errorf("start: interrupted by %v", s)
			}
		}
	}
}

// loop waits for tenures and runs the command in each, one at a time.
func (r *Runner) loop(ctx context.Context, giveUp <-chan time.Time) (int, error) {
	stopped := r.watchNodes()
	for {
		if t := r.nextTenure(); t != nil {
			r.setBusy(t.slot)
			code, end := r.lead(ctx, t)
			r.setBusy(0)
			close(t.dead)
			if end != endSkipped {
				giveUp = nil // it bounds the first start only
			}
			switch {
			case end == endSkipped && ctx.Err() == nil:
				continue
			case end != endLost || r.cfg.Once || ctx.Err() != nil:
				return code, ctx.Err()
			}
			r.log.Warn("leadership lost; the command was stopped; waiting to lead again", "slot", t.slot, "epoch", t.epoch, "status", code)
			continue
		}
		select {
		case <-r.wake:
		case <-giveUp:
			r.log.Warn("not leading within the timeout: giving up", "timeout", r.cfg.LeadTimeout)
			return 1, r.leadTimeout()
		case sig := <-r.cfg.Signals:
			if s, ok := terminating(sig); ok {
				r.log.Info("signal while not leading: stopping", "signal", s)
				return 128 + int(s), nil
			}
		case <-ctx.Done():
			return 1, ctx.Err()
		case k := <-stopped:
			return 1, fmt.Errorf("node stopped: %w", r.nodes[k-1].Err())
		}
	}
}

// stopNodes stops the nodes of every slot, at once, which releases the
// lease of any that leads.
func (r *Runner) stopNodes() {
	ctx, cancel := context.WithTimeout(context.Background(), r.ncfg.DrainTimeout+r.ncfg.RequestTimeout+time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for _, n := range r.nodes {
		wg.Go(func() {
			if err := n.Stop(ctx); err != nil && !errors.Is(err, cluster.ErrNotStarted) {
				r.log.Warn("stopping the node", "err", err)
			}
		})
	}
	wg.Wait()
}

// terminating reports whether sig asks this process to end.
func terminating(sig os.Signal) (syscall.Signal, bool) {
	s, ok := sig.(syscall.Signal)
	if !ok {
		return 0, false
	}
	switch s {
	case syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT:
		return s, true
	}
	return s, false
}

// env is the command's added environment for tenure t.
func (r *Runner) env(t *tenure) []string {
	return append(append([]string(nil), r.cfg.Env...),
		EnvCluster+"="+r.ncfg.ClusterID, EnvNode+"="+r.ncfg.NodeID, EnvEpoch+"="+strconv.FormatInt(t.epoch, 10),
		EnvSlot+"="+strconv.Itoa(t.slot))
}
