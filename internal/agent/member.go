package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/health"
	"github.com/ozanturksever/go-cluster/internal/runner"
	"github.com/ozanturksever/go-cluster/metrics"
	"github.com/ozanturksever/go-cluster/vip"
)

// retryConnect is how long a member waits before it tries again to reach
// NATS.
const retryConnect = 2 * time.Second

// member is the agent's part in one cluster: its node, checks, notify
// commands, VIPs and service.
type member struct {
	cfg     Cluster // with defaults
	opts    Options
	log     *slog.Logger
	hooks   cluster.Hooks
	service *runner.Service

	mu    sync.Mutex
	node  *cluster.Node
	ready *readiness
	notes *notifier
	// health answers health queries once the node has started.
	health  *health.Adapter
	checker *health.Checker
	started bool // the node has started
	// maintSub answers maintenance requests.
	maintSub *nats.Subscription
	// standings and deference: what the agents of the cluster announce,
	// and whether this node leaves the election to one of them
	// (member_standing.go); set once the node has started.
	standings *standings
	deference *deference
	// appliedPriority is the priority last given to the node (weights.go).
	appliedPriority int

	metrics *metrics.Collector
	// starts says which failed starts are logged: a refusal that repeats
	// every retryConnect is logged once.
	starts startGate

	cancel context.CancelFunc
	done   chan struct{} // closed when the start loop has ended
}

// newMember builds a member; start starts it.
func newMember(cl Cluster, opts Options) (*member, error) {
	log := opts.Logger.With("cluster", cl.Name)
	col, err := metrics.New(cl.Name, cl.Election.NodeID)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", cl.Name, err)
	}
	m := &member{cfg: cl, opts: opts, log: log, done: make(chan struct{}), metrics: col, appliedPriority: cl.Election.Priority}
	var hooks []cluster.Hooks
	for i, v := range cl.VIPs {
		vc, err := vipConfig(v, log)
		if err != nil {
			return nil, fmt.Errorf("cluster %s: vips[%d]: %w", cl.Name, i, err)
		}
		mgr, err := vip.NewManager(vc)
		if err != nil {
			return nil, fmt.Errorf("cluster %s: vips[%d]: %w", cl.Name, i, err)
		}
		hooks = append(hooks, vip.NewHooks(mgr))
	}
	if s := cl.Service; s != nil {
		svc, err := runner.NewService(runner.ServiceConfig{Argv: s.Argv, Grace: s.Grace.D(), StepDownOnExit: s.OnExit == OnExitStepDown,
			BackoffMin: s.RestartBackoff.Min.D(), BackoffMax: s.RestartBackoff.Max.D(), Logger: log,
			Stdio: runner.Stdio{Stdout: opts.Output, Stderr: opts.Output}})
		if err != nil {
			return nil, fmt.Errorf("cluster %s: service: %w", cl.Name, err)
		}
		m.service = svc
		hooks = append(hooks, svc) // after the VIPs: started once they are up
	}
	m.hooks = cluster.ComposeHooks(append(hooks, healthHooks{m}, eventHooks{m}, standingHooks{m})...)
	m.setRuntime(cl)
	return m, nil
}

// setRuntime starts the checks and the notifier of cl, replacing (and
// stopping) the ones running: what a reload may change without touching
// the election.
func (m *member) setRuntime(cl Cluster) {
	m.mu.Lock()
	prev := m.ready
	m.mu.Unlock()
	ready := newReadiness(cl.Checks, cl.MaintenanceFile, m.fault, prev, m.log)
	notes := newNotifier(cl.Notify, cl.Name, cl.Election.NodeID, cl.VIPs, m.opts.Output, m.log)
	m.mu.Lock()
	oldReady, oldNotes := m.ready, m.notes
	if oldReady != nil && oldReady.maintenanceOn() {
		ready.setMaintenance(true) // a reload keeps the switch
	}
	m.ready, m.notes = ready, notes
	m.cfg.Checks, m.cfg.MaintenanceFile, m.cfg.Notify = cl.Checks, cl.MaintenanceFile, cl.Notify
	m.mu.Unlock()
	if oldReady != nil {
		oldReady.stop()
	}
	if oldNotes != nil {
		oldNotes.close()
	}
}

// nodeConfig is the library's Config of the member.
func (m *member) nodeConfig() (cluster.Config, error) {
	m.mu.Lock()
	cl := m.cfg
	m.mu.Unlock()
	ep, err := m.opts.Connect(cl)
	if err != nil {
		return cluster.Config{}, err
	}
	cfg := cl.Election.nodeConfig(cl.Name, cl.Election.NodeID)
	cfg.NATSURLs, cfg.NATSOptions, cfg.Metrics = ep.URLs, ep.Options, m.metrics
	cfg.Logger = slog.New(libraryLog{m.opts.Logger.Handler()})
	cfg.JetStreamDomain, cfg.JetStreamAPIPrefix = ep.JetStreamDomain, ep.JetStreamAPIPrefix
	if !*cl.Election.Preempt {
		cfg.Priority = 0 // never asks a leader to hand over
	}
	// Always: the maintenance switch works without checks too.
	cfg.ReadinessCheck = m.readyCheck
	cfg.ReadinessThreshold = 1 // rise and fall are the checks' own
	cfg.ReadinessInterval = readinessInterval(cl.Checks)
	return cfg, nil
}

// readinessInterval is how often the node reads the checks' standing.
func readinessInterval(checks []Check) time.Duration {
	d := 500 * time.Millisecond
	for _, c := range checks {
		d = min(d, c.Interval.D())
	}
	return d
}

// readyCheck is the node's ReadinessCheck: the checks' standing now,
// then whether it leaves the election to a peer of higher priority.
func (m *member) readyCheck(context.Context) error {
	m.applyPriority()
	m.mu.Lock()
	r := m.ready
	m.mu.Unlock()
	if err := r.ready(); err != nil {
		return err
	}
	return m.holdBack(time.Now())
}

// fault posts a fault notice.
func (m *member) fault(reason string) {
	m.log.Warn("not ready", "reason", reason)
	m.post(notice{event: EventFault, reason: reason})
}

// post fills in the node's view and queues n.
func (m *member) post(n notice) {
	m.mu.Lock()
	node, notes := m.node, m.notes
	m.mu.Unlock()
	if node != nil {
		if n.leader == "" && n.event != EventLeaderChange {
			n.leader = node.Leader()
		}
		if n.epoch == 0 {
			n.epoch = node.Epoch()
		}
		if n.role == "" {
			n.role = roleName(node.IsLeader())
		}
	}
	notes.post(n)
}

func roleName(leading bool) string {
	if leading {
		return "leader"
	}
	return "follower"
}

// start starts the node in the background; while NATS cannot be reached
// it says so and tries again.
func (m *member) start() {
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	go func() {
		defer close(m.done)
		for {
			err := m.startOnce(ctx)
			if err == nil {
				m.starts.started()
				m.watchNode(ctx)
				return
			}
			if ctx.Err() != nil {
				return
			}
			if !errors.Is(err, cluster.ErrConnect) {
				if say, repeats := m.starts.failed(err, time.Now()); say {
					m.log.Error("cannot start; trying again", "err", err, "in", retryConnect, "repeated", repeats)
					m.post(notice{event: EventFault, reason: err.Error()})
				} else {
					m.log.Debug("cannot start; trying again", "err", err, "in", retryConnect)
				}
			} else {
				m.log.Warn("cannot reach NATS; trying again", "err", err, "in", retryConnect)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(retryConnect):
			}
		}
	}()
}

// watchNode reports a node that stops on its own (permission denied, a
// bucket it cannot use: see cluster.Node.Err) as a fault.
func (m *member) watchNode(ctx context.Context) {
	m.mu.Lock()
	node := m.node
	m.mu.Unlock()
	select {
	case <-ctx.Done():
	case <-node.Done():
		if err := node.Err(); err != nil {
			m.log.Error("the node stopped", "err", err)
			m.post(notice{event: EventFault, reason: err.Error()})
		}
	}
}

func (m *member) startOnce(ctx context.Context) error {
	cfg, err := m.nodeConfig()
	if err != nil {
		return err
	}
	node, err := cluster.NewNode(cfg, m.hooks)
	if err != nil {
		return err
	}
	if m.service != nil {
		m.service.Bind(node)
	}
	m.mu.Lock()
	m.node = node
	m.mu.Unlock()
	if err := m.metrics.Bind(node); err != nil {
		return err
	}
	if err := node.Start(ctx); err != nil {
		return err
	}
	m.mu.Lock()
	m.started = true
	m.mu.Unlock()
	m.startHealth(node)
	m.serveMaintenance(node)
	m.startStandings(node)
	return nil
}

// stop stops the node (releasing the lease once the service has exited
// and the VIPs are gone), then the checks and the notifier, after the
// notices queued have run.
func (m *member) stop(ctx context.Context) {
	if m.cancel == nil { // never started
		m.discard()
		return
	}
	m.cancel()
	<-m.done
	m.mu.Lock()
	node := m.node
	m.mu.Unlock()
	if node != nil {
		if err := node.Stop(ctx); err != nil && !errors.Is(err, cluster.ErrNotStarted) {
			m.log.Warn("stop", "err", err)
		}
	}
	m.stopHealth()
	m.stopMaintenance()
	m.stopStandings()
	m.mu.Lock()
	ready, notes := m.ready, m.notes
	m.mu.Unlock()
	ready.stop()
	notes.close()
}

// eventHooks turn leadership events into notices.
type eventHooks struct{ m *member }

func (h eventHooks) OnBecomeLeader(ctx context.Context) error {
	epoch, _ := cluster.TenureEpoch(ctx)
	h.m.post(notice{event: EventBecomeLeader, role: "leader", leader: h.m.cfg.Election.NodeID, epoch: epoch})
	return nil
}

func (h eventHooks) OnLoseLeadership(context.Context) error {
	h.m.post(notice{event: EventLoseLeadership, role: "follower"})
	return nil
}

func (h eventHooks) OnLeaderChange(_ context.Context, nodeID string) error {
	h.m.post(notice{event: EventLeaderChange, leader: nodeID})
	return nil
}

// config is the member's configuration now.
func (m *member) config() Cluster {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cfg
}

// discard ends a member that was never started.
func (m *member) discard() {
	m.ready.stop()
	m.notes.close()
}
