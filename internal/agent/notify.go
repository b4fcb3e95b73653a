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
)

// Events a notify command runs on, as GO_CLUSTER_EVENT names them.
const (
	EventBecomeLeader   = "become_leader"
	EventLoseLeadership = "lose_leadership"
	EventLeaderChange   = "leader_change"
	EventFault          = "fault"
)

// notice is one event to notify.
type notice struct {
	event  string
	role   string // "leader" or "follower"
	leader string
	epoch  int64
	reason string // fault only
}

// notifier runs a cluster's notify commands one at a time, in the order
// of the events, each with a timeout after which its whole process group
// is killed. Events are queued without blocking the caller (a hook).
type notifier struct {
	cfg     Notify
	cluster string
	node    string
	vips    string
	out     io.Writer
	log     *slog.Logger

	mu      sync.Mutex
	queue   []notice
	wake    chan struct{}
	closing bool
	done    chan struct{}
}

func newNotifier(cfg Notify, clusterName, node string, vips []VIP, out io.Writer, log *slog.Logger) *notifier {
	addrs := make([]string, len(vips))
	for i, v := range vips {
		addrs[i] = v.Address
	}
	n := &notifier{cfg: cfg, cluster: clusterName, node: node, vips: strings.Join(addrs, ","), out: out, log: log,
		wake: make(chan struct{}, 1), done: make(chan struct{})}
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
	}
	return nil
}

// post queues ev if it has a command.
func (n *notifier) post(ev notice) {
	if len(n.argv(ev.event)) == 0 {
		return
	}
	n.mu.Lock()
	if !n.closing {
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
		n.run(ev)
	}
}

// run runs one event's command and waits for it, at most the timeout.
func (n *notifier) run(ev notice) {
	argv := n.argv(ev.event)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(cmd.Environ(),
		EnvCluster+"="+n.cluster, EnvNode+"="+n.node, EnvRole+"="+ev.role, EnvLeader+"="+ev.leader,
		EnvEpoch+"="+strconv.FormatInt(ev.epoch, 10), EnvVIPs+"="+n.vips, EnvEvent+"="+ev.event, EnvReason+"="+ev.reason)
	cmd.Stdout, cmd.Stderr = n.out, n.out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		n.log.Error("notify command did not start", "event", ev.event, "err", err)
		return
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
		n.log.Error("notify command timed out: its process group was killed", "event", ev.event, "timeout", n.cfg.Timeout.D())
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // nothing it started outlives it
	if err != nil {
		n.log.Warn("notify command failed", "event", ev.event, "err", err)
	}
}
