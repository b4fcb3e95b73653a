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
	vips    *vipSet
	service *runner.Service

	mu    sync.Mutex
	node  *cluster.Node
	ready *readiness
	notes *notifier
	// health answers health queries once the node has started.
	health  *health.Adapter
	checker *health.Checker
	started bool // the node has started
	faulted bool // a fault was posted and has not cleared
	decided bool // every check has had a result once
	// judging makes a judgement of readiness, the fault or clearing it
	// shows, its mark (faulted) and its notice one step, whoever judges:
	// readyCheck or a change of the checks (judgeChange). A change judged
	// by both is one fault; a fault posted after readyCheck read the node
	// ready is not taken as cleared by that reading, nor is its notice
	// after fault_cleared. Logging waits for the lock's release.
	judging sync.Mutex
	// maintSub answers maintenance requests.
	maintSub *nats.Subscription
	// standings and deference: what the agents of the cluster announce,
	// and whether this node leaves the election to one of them
	// (member_standing.go); set once the node has started.
	standings *standings
	deference *deference
	// appliedPriority is the priority last given to the node, and
	// vipDemoted whether it was 0 for a VIP it could not hold (weights.go).
	appliedPriority int
	vipDemoted      bool

	metrics *metrics.Collector
	// starts says which failed starts are logged: a refusal that repeats
	// every retryConnect is logged once.
	starts startGate
	// agentMetrics are the checks', VIPs' and notify commands' series.
	agentMetrics *metrics.AgentCollector
	nats         *natsWatch
	// conns is the agent's connections; conn the one the node uses, held
	// from the node's start to the member's stop.
	conns *connPool
	conn  *sharedConn

	cancel context.CancelFunc
	done   chan struct{} // closed when the start loop has ended
}

// newMember builds a member; start starts it.
func newMember(cl Cluster, opts Options, conns *connPool) (*member, error) {
	log := opts.Logger.With("cluster", cl.Name)
	col, err := metrics.New(cl.Name, cl.Election.NodeID)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", cl.Name, err)
	}
	m := &member{cfg: cl, opts: opts, log: log, done: make(chan struct{}), metrics: col, appliedPriority: cl.Election.Priority, nats: newNATSWatch(), conns: conns}
	if m.agentMetrics, err = metrics.NewAgentCollector(cl.Name, cl.Election.NodeID, m); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", cl.Name, err)
	}
	entries, err := newVIPEntries(cl.VIPs, log)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", cl.Name, err)
	}
	m.vips = &vipSet{log: log, onFault: m.vipUnusable, entries: entries}
	hooks := []cluster.Hooks{m.vips}
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
	ready := newReadiness(cl.Checks, cl.MaintenanceFile, m.judgeChange, prev, m.log)
	notes := newNotifier(cl.Notify, cl.Name, cl.Election.NodeID, cl.Election.Priority, cl.VIPs, m.opts.Output, m.log)
	notes.observe = m.agentMetrics.ObserveNotify
	m.mu.Lock()
	oldReady, oldNotes := m.ready, m.notes
	if oldNotes != nil {
		notes.setState(oldNotes.currentState()) // a reload changes no state: notify.state does not run
	}
	// A reload keeps the switch: ready inherited it from prev; one
	// switched on since is applied once mu is released (setMaintenance
	// judges, and judging takes judging then mu).
	switched := oldReady != nil && oldReady.maintenanceOn() && !ready.maintenanceOn()
	m.ready, m.notes = ready, notes
	m.cfg.Checks, m.cfg.MaintenanceFile, m.cfg.Notify = cl.Checks, cl.MaintenanceFile, cl.Notify
	m.mu.Unlock()
	if switched {
		ready.setMaintenance(true)
	}
	if oldReady != nil {
		oldReady.stop()
	}
	if oldNotes != nil {
		oldNotes.close()
	}
}

// nodeConfig is the library's Config of the member, without its
// connection (Conn: the pool's), and how it reaches NATS.
func (m *member) nodeConfig() (cluster.Config, Endpoint, error) {
	m.mu.Lock()
	cl := m.cfg
	m.mu.Unlock()
	ep, err := m.opts.Connect(cl)
	if err != nil {
		return cluster.Config{}, Endpoint{}, err
	}
	cfg := cl.Election.nodeConfig(cl.Name, cl.Election.NodeID)
	cfg.NATSURLs, cfg.Metrics = nil, m.metrics
	cfg.Logger = slog.New(libraryLog{m.opts.Logger.Handler()})
	cfg.JetStreamDomain, cfg.JetStreamAPIPrefix = ep.JetStreamDomain, ep.JetStreamAPIPrefix
	if !*cl.Election.Preempt {
		cfg.Priority = 0 // never asks a leader to hand over
	}
	// Always: the maintenance switch works without checks too.
	cfg.ReadinessCheck = m.readyCheck
	cfg.ReadinessThreshold = 1 // rise and fall are the checks' own
	cfg.ReadinessInterval = readinessInterval(cl.Checks)
	return cfg, ep, nil
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
// then whether it leaves the election to a peer of higher priority. A
// fault that clears is posted here: the node reads it every
// ReadinessInterval.
func (m *member) readyCheck(context.Context) error {
	m.applyPriority()
	m.mu.Lock()
	r := m.ready
	m.mu.Unlock()
	err := m.judge(r)
	m.publish()
	if err != nil {
		return err
	}
	return m.holdBack(time.Now())
}

// judge reads whether the node is ready (its checks, r, and its VIPs)
// and posts the fault or fault_cleared this reading shows.
func (m *member) judge(r *readiness) error {
	m.judging.Lock()
	v := r.judge()
	if v.fault {
		m.markFault(v.err.Error())
	}
	err := errors.Join(v.err, m.vips.err())
	m.mu.Lock()
	cleared := err == nil && m.faulted
	if cleared {
		m.faulted = false
	}
	// Not ready on the checks' first results: a fault, as keepalived
	// starts such an instance in FAULT (later ones come from readiness).
	// decided and v.err are one reading: a first result that passes is
	// never judged as no result yet.
	startFault := v.decided && !m.decided && err != nil && !m.faulted
	m.decided = m.decided || v.decided
	m.mu.Unlock()
	if cleared {
		m.post(notice{event: EventFaultCleared})
	}
	if startFault {
		m.markFault(err.Error())
	}
	m.judging.Unlock()
	switch {
	case v.fault:
		m.logFault(v.err.Error())
	case cleared:
		m.log.Info("ready again")
	case startFault:
		m.logFault(err.Error())
	}
	return err
}

// judgeChange is readiness's onChange: r changed (a check's result, the
// maintenance switch), and the fault this shows, if any, is posted here.
// Its fault is decided and marked in one step, as readyCheck's is: the
// one of the two that judges the change first posts it, once.
func (m *member) judgeChange(r *readiness) {
	m.judging.Lock()
	v := r.judge()
	if v.fault {
		m.markFault(v.err.Error())
	}
	m.judging.Unlock()
	if v.fault {
		m.logFault(v.err.Error())
	}
}

// fault posts a fault notice: the node stopped being ready.
func (m *member) fault(reason string) {
	m.postFault(reason)
	m.logFault(reason)
}

// postFault posts a fault notice; fault_cleared follows once the node is
// ready.
func (m *member) postFault(reason string) {
	m.judging.Lock()
	defer m.judging.Unlock()
	m.markFault(reason)
}

// markFault marks the node faulted and queues the fault's notice, with
// judging held.
func (m *member) markFault(reason string) {
	m.mu.Lock()
	m.faulted = true
	m.mu.Unlock()
	m.post(notice{event: EventFault, reason: reason})
}

// logFault says a fault was posted.
func (m *member) logFault(reason string) {
	m.log.Warn("not ready", "reason", reason)
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
	m.vips.watch() // interfaces tracked, stray copies removed, from the start
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
			// NATS not reached is said by the pool, once for the
			// connection rather than once for each of its clusters.
			if !errors.Is(err, cluster.ErrConnect) {
				if say, repeats := m.starts.failed(err, time.Now()); say {
					m.log.Error("cannot start; trying again", "err", err, "in", retryConnect, "repeated", repeats)
					m.postFault(err.Error())
				} else {
					m.log.Debug("cannot start; trying again", "err", err, "in", retryConnect)
				}
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
			m.postFault(err.Error())
		}
	}
}

func (m *member) startOnce(ctx context.Context) (err error) {
	cfg, ep, err := m.nodeConfig()
	if err != nil {
		return err
	}
	if cfg.Conn, err = m.connect(ctx, ep); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			m.releaseConn()
		}
	}()
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
	m.releaseConn() // after the node and the add-ons on its connection
	m.post(notice{event: EventStop})
	m.mu.Lock()
	ready, notes := m.ready, m.notes
	m.mu.Unlock()
	ready.stop()
	notes.close()
	m.vips.close()
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
	m.vips.close()
}

// setVIPs applies a reload's change of the VIPs, in place.
func (m *member) setVIPs(vips []VIP, c vipChange) {
	m.mu.Lock()
	m.cfg.VIPs = vips
	m.mu.Unlock()
	m.vips.apply(c)
}
