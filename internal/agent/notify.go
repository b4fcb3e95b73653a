package agent

import (
	"io"
	"log/slog"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Environment of notify commands.
const (
	EnvCluster = "GO_CLUSTER_CLUSTER"
	EnvNode    = "GO_CLUSTER_NODE"
	EnvRole    = "GO_CLUSTER_ROLE"
	EnvLeader  = "GO_CLUSTER_LEADER"
	EnvEpoch   = "GO_CLUSTER_EPOCH"
	EnvVIPs    = "GO_CLUSTER_VIPS"
	EnvEvent   = "GO_CLUSTER_EVENT"
	EnvReason  = "GO_CLUSTER_REASON"
	// EnvState is the keepalived state after the event: MASTER, BACKUP,
	// FAULT or STOP (see StateMaster).
	EnvState = "GO_CLUSTER_STATE"
)

// Events a notify command runs on, as GO_CLUSTER_EVENT names them.
const (
	EventBecomeLeader   = "become_leader"
	EventLoseLeadership = "lose_leadership"
	EventLeaderChange   = "leader_change"
	EventFault          = "fault"
	// EventFaultCleared: a node that was not ready (a fault) is ready
	// again.
	EventFaultCleared = "fault_cleared"
	// EventStop: the agent stops the cluster (only notify.state runs).
	EventStop = "stop"
)

// EventState names notify.state's command in metrics and logs.
const EventState = "state"

// notice is one event to notify.
type notice struct {
	event  string
	role   string // "leader" or "follower"
	leader string
	epoch  int64
	reason string // fault only
	// Set by post: the keepalived state after the event, and whether the
	// event changed it.
	state   string
	changed bool
}

// notifier runs a cluster's notify commands one at a time, in the order
// of the events, each with a timeout after which its whole process group
// is killed. Events are queued without blocking the caller (a hook).
type notifier struct {
	cfg      Notify
	cluster  string
	node     string
	priority string // the configured priority: keepalived's fourth argument
	vips     string
	out      io.Writer
	log      *slog.Logger
	// observe, when set, is told of every command run (metrics). It is
	// called on the notifier's goroutine, without a lock held.
	observe func(command string, took time.Duration, err error)

	mu      sync.Mutex
	state   string // the keepalived state last posted
	queue   []notice
	wake    chan struct{}
	closing bool
	done    chan struct{}
}

func newNotifier(cfg Notify, clusterName, node string, priority int, vips []VIP, out io.Writer, log *slog.Logger) *notifier {
	addrs := make([]string, len(vips))
	for i, v := range vips {
		addrs[i] = v.Address
	}
	n := &notifier{cfg: cfg, cluster: clusterName, node: node, priority: strconv.Itoa(priority), vips: strings.Join(addrs, ","),
		out: out, log: log, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go n.loop()
	return n
}

// argv is the command of an event; nil for none.
func (n *notifier) argv(event string) []string {
	switch event {
	case EventBecomeLeader:
		return n.cfg.BecomeLeader
	case EventLoseLeadership:
		return n.cfg.LoseLeadership
	case EventLeaderChange:
		return n.cfg.LeaderChange
	case EventFault:
		return n.cfg.Fault
	case EventFaultCleared:
		return n.cfg.FaultCleared
	}
	return nil
}

// post queues ev if it has a command, or changes the state and there is
// a notify.state command.
func (n *notifier) post(ev notice) {
	n.mu.Lock()
	next := nextState(n.state, ev)
	ev.state, ev.changed, n.state = next, next != n.state, next
	if !n.closing && (len(n.argv(ev.event)) > 0 || ev.changed && len(n.cfg.State) > 0) {
		n.queue = append(n.queue, ev)
	}
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// close runs what is queued, then stops.
func (n *notifier) close() {
	n.mu.Lock()
	n.closing = true
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
	<-n.done
}

func (n *notifier) loop() {
	defer close(n.done)
	for {
		n.mu.Lock()
		if len(n.queue) == 0 {
			closing := n.closing
			n.mu.Unlock()
			if closing {
				return
			}
			<-n.wake
			continue
		}
		ev := n.queue[0]
		n.queue = n.queue[1:]
		n.mu.Unlock()
		n.runNotice(ev)
	}
}

// runNotice runs the event's command, then notify.state's if the state
// changed (keepalived runs notify_master and the like before notify).
func (n *notifier) runNotice(ev notice) {
	if argv := n.argv(ev.event); len(argv) > 0 {
		n.run(ev.event, argv, ev)
	}
	if ev.changed && len(n.cfg.State) > 0 {
		argv := append(append([]string(nil), n.cfg.State...), "INSTANCE", n.cluster, ev.state, n.priority)
		n.run(EventState, argv, ev)
	}
}

// env is the environment of a command run for ev. GO_CLUSTER_VIPS names
// the VIPs only where they are held: on the leader.
func (n *notifier) env(ev notice) []string {
	vips := ""
	if ev.role == "leader" {
		vips = n.vips
	}
	return []string{EnvCluster + "=" + n.cluster, EnvNode + "=" + n.node, EnvRole + "=" + ev.role, EnvLeader + "=" + ev.leader,
		EnvEpoch + "=" + strconv.FormatInt(ev.epoch, 10), EnvVIPs + "=" + vips, EnvEvent + "=" + ev.event,
		EnvReason + "=" + ev.reason, EnvState + "=" + ev.state}
}

// run runs one command (named as the metrics name it) and waits for it,
// at most the timeout.
func (n *notifier) run(name string, argv []string, ev notice) {
	start := time.Now()
	err := n.exec(name, argv, ev)
	if n.observe != nil {
		n.observe(name, time.Since(start), err)
	}
}

func (n *notifier) exec(name string, argv []string, ev notice) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(cmd.Environ(), n.env(ev)...)
	cmd.Stdout, cmd.Stderr = n.out, n.out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		n.log.Error("notify command did not start", "event", ev.event, "command", name, "err", err)
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(n.cfg.Timeout.D())
	defer timer.Stop()
	var err error
	select {
	case err = <-done:
	case <-timer.C:
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		err = <-done
		n.log.Error("notify command timed out: its process group was killed", "event", ev.event, "command", name, "timeout", n.cfg.Timeout.D())
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // nothing it started outlives it
	if err != nil {
		n.log.Warn("notify command failed", "event", ev.event, "command", name, "err", err)
	}
	return err
}
