package runner

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
)

// ServiceConfig configures a Service.
type ServiceConfig struct {
	Argv  []string
	Env   []string // added to this process's environment, before GO_CLUSTER_*
	Stdio Stdio
	// Grace between SIGTERM and SIGKILL; 0 means MaxGrace of the node's
	// timings, and more than that is cut to it.
	Grace time.Duration
	// StepDownOnExit makes the node step down when the service exits on
	// its own while leading; otherwise it is restarted after a back-off
	// that doubles from BackoffMin to BackoffMax.
	StepDownOnExit         bool
	BackoffMin, BackoffMax time.Duration
	Logger                 *slog.Logger
}

// Service is a command that runs only while a node leads: cluster.Hooks
// to compose with the node's other hooks, after the VIPs' so that it
// starts once they are up. It is stopped as
// Runner stops its command (see the package doc), and OnLoseLeadership
// returns only once it has exited.
type Service struct {
	cfg ServiceConfig
	log *slog.Logger

	mu   sync.Mutex
	node *cluster.Node
	done chan struct{} // closed when the current tenure's supervision ends
}

var _ cluster.Hooks = (*Service)(nil)

// NewService returns a Service; Bind it to its node before the node starts.
func NewService(cfg ServiceConfig) (*Service, error) {
	if len(cfg.Argv) == 0 {
		return nil, fmt.Errorf("%w: a service needs a command", ErrConfig)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.BackoffMin <= 0 {
		cfg.BackoffMin = time.Second
	}
	cfg.BackoffMax = max(cfg.BackoffMax, cfg.BackoffMin)
	return &Service{cfg: cfg, log: cfg.Logger}, nil
}

// Bind sets the node whose tenures the service follows.
func (s *Service) Bind(n *cluster.Node) {
	s.mu.Lock()
	s.node = n
	s.mu.Unlock()
}

// OnBecomeLeader starts supervising the service for the tenure ctx.
func (s *Service) OnBecomeLeader(ctx context.Context) error {
	s.mu.Lock()
	n := s.node
	done := make(chan struct{})
	s.done = done
	s.mu.Unlock()
	if n == nil {
		close(done)
		return fmt.Errorf("service: not bound to a node")
	}
	ncfg := n.Config()
	grace := s.cfg.Grace
	if limit := MaxGrace(ncfg); grace <= 0 || grace > limit {
		grace = limit
	}
	epoch, _ := cluster.TenureEpoch(ctx)
	go func() {
		defer close(done)
		s.supervise(ctx, n, ncfg, grace, epoch)
	}()
	return nil
}

// OnLoseLeadership returns once the service has exited.
func (s *Service) OnLoseLeadership(ctx context.Context) error {
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	if done == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("service still running: %w", ctx.Err())
	}
}

// OnLeaderChange does nothing.
func (*Service) OnLeaderChange(context.Context, string) error { return nil }

// supervise runs the service for one tenure: restarted with back-off when
// it exits on its own (or the node steps down, as configured), stopped
// when the tenure ends.
func (s *Service) supervise(tenure context.Context, n *cluster.Node, ncfg cluster.Config, grace time.Duration, epoch int64) {
	env := append(append([]string(nil), s.cfg.Env...),
		EnvCluster+"="+ncfg.ClusterID, EnvNode+"="+ncfg.NodeID, EnvEpoch+"="+strconv.FormatInt(epoch, 10))
	backoff := s.cfg.BackoffMin
	for {
		w := watch{node: n, ncfg: ncfg, grace: grace, log: s.log, what: "the service"}
		if ok, _ := w.waitTimeLeft(context.Background(), tenure); !ok {
			return
		}
		c, err := StartChild(s.cfg.Argv, env, s.cfg.Stdio)
		var code int
		if err != nil {
			s.log.Error("cannot start the service", "err", err)
			code = 127
		} else {
			s.log.Info("service started", "epoch", epoch, "pid", c.Pid())
			var how end
			if code, how = w.run(context.Background(), tenure, c); how != endExited {
				return
			}
		}
		if s.cfg.StepDownOnExit {
			s.log.Warn("the service exited while leading: stepping down", "status", code)
			go func() { _ = n.StepDown(context.Background()) }() // not here: StepDown waits for OnLoseLeadership, which waits for this
			return
		}
		s.log.Warn("the service exited while leading: restarting it", "status", code, "in", backoff)
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-tenure.Done():
			t.Stop()
			return
		}
		backoff = min(2*backoff, s.cfg.BackoffMax)
	}
}
