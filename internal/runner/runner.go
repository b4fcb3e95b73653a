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
)

// ErrConfig is wrapped by the errors of New about its Config.
var ErrConfig = errors.New("invalid runner config")

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
	node  *cluster.Node
	ncfg  cluster.Config // the node's, with defaults
	log   *slog.Logger
	grace time.Duration

	tenures chan *tenure  // from OnBecomeLeader to Run
	quit    chan struct{} // closed when Run returns: hooks stop waiting on it

	mu      sync.Mutex
	current *tenure // the tenure OnLoseLeadership waits for
}

// tenure is one term as leader, as the hooks and Run share it.
type tenure struct {
	ctx   context.Context
	epoch int64
	dead  chan struct{} // closed once no command of this tenure runs
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
	r := &Runner{cfg: cfg, log: cfg.Logger, tenures: make(chan *tenure, 1), quit: make(chan struct{})}
	node, err := cluster.NewNode(cfg.Node, hooks{r})
	if err != nil {
		return nil, err
	}
	r.node, r.ncfg = node, node.Config()
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

// Node is the Runner's node, for status and tests.
func (r *Runner) Node() *cluster.Node { return r.node }

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
	if err := r.start(ctx); err != nil {
		return 1, err
	}
	code, err := r.loop(ctx)
	r.stopNode()
	return code, err
}

// retryConnect is how long Run waits before it tries again to reach NATS.
const retryConnect = 2 * time.Second

// start starts the node. While no NATS server can be reached it says so and
// tries again with a new node (a Node starts once); a terminating signal
// or ctx ends the wait.
func (r *Runner) start(ctx context.Context) error {
	for {
		err := r.startOnce(ctx)
		if err == nil || !errors.Is(err, cluster.ErrConnect) {
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
		case <-ctx.Done():
			t.Stop()
			return err
		}
		if r.node, err = cluster.NewNode(r.cfg.Node, hooks{r}); err != nil {
			return err
		}
	}
}

// startOnce starts the node; a terminating signal ends a start that waits
// on NATS.
func (r *Runner) startOnce(ctx context.Context) error {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	started := make(chan error, 1)
	go func() { started <- r.node.Start(sctx) }()
	for {
		select {
		case err := <-started:
			return err
		case sig := <-r.cfg.Signals:
			if s, ok := terminating(sig); ok {
				cancel()
				<-started
				return fmt.Errorf("start: interrupted by %v", s)
			}
		}
	}
}

// loop waits for tenures and runs the command in each.
func (r *Runner) loop(ctx context.Context) (int, error) {
	for {
		select {
		case t := <-r.tenures:
			code, end := r.lead(ctx, t)
			close(t.dead)
			switch {
			case end == endSkipped && ctx.Err() == nil:
				continue
			case end != endLost || r.cfg.Once || ctx.Err() != nil:
				return code, ctx.Err()
			}
			r.log.Warn("leadership lost; the command was stopped; waiting to lead again", "epoch", t.epoch, "status", code)
		case sig := <-r.cfg.Signals:
			if s, ok := terminating(sig); ok {
				r.log.Info("signal while not leading: stopping", "signal", s)
				return 128 + int(s), nil
			}
		case <-ctx.Done():
			return 1, ctx.Err()
		case <-r.node.Done():
			return 1, fmt.Errorf("node stopped: %w", r.node.Err())
		}
	}
}

// stopNode stops the node, which releases the lease if it leads, and
// frees a tenure that Run never took up.
func (r *Runner) stopNode() {
	go func() { // OnLoseLeadership of a tenure never run must not wait for it
		for {
			select {
			case t := <-r.tenures:
				close(t.dead)
			case <-r.quit:
				return
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), r.ncfg.DrainTimeout+r.ncfg.RequestTimeout+time.Second)
	defer cancel()
	if err := r.node.Stop(ctx); err != nil {
		r.log.Warn("stopping the node", "err", err)
	}
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
		EnvCluster+"="+r.ncfg.ClusterID, EnvNode+"="+r.ncfg.NodeID, EnvEpoch+"="+strconv.FormatInt(t.epoch, 10))
}
