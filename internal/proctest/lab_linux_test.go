package proctest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/proof/arplab"
)

// The lab's timings: issue 33's lease_ttl, the agent's default renew
// interval under 9s (lease_ttl/4), and the client's who-has interval.
const (
	labTTL   = 2 * time.Second
	labRenew = labTTL / 4
	labProbe = 2 * time.Millisecond
	labNATS  = 4222 // nats-server's port in its namespace
	labHTTP  = "127.0.0.1:9273"
)

// agentLab is issue 33's lab: two hosts (network namespaces) and a client
// on one bridge (internal/proof/arplab), a namespace with a nats-server that
// each host reaches over a veth of its own (nats0), and one built
// `go-cluster agent` per host, run inside the host's namespace as an
// operator would run it there. The client asks who-has VIP every
// labProbe and records who answers.
type agentLab struct {
	t      *testing.T
	net    *arplab.Lab
	natsNS string
	nats   *natsProc
	watch  *arplab.Watch
	dir    string
	seq    int
	agents map[*arplab.Host]*runProc // each host's last agent
	// handBack is when a last took the VIP back from b (TestAgentLabCounts).
	handBack time.Time
}

// newAgentLab builds the lab, its namespaces' names starting with
// prefix and the process's ID; everything goes at cleanup.
func newAgentLab(t *testing.T, prefix string) *agentLab {
	t.Helper()
	requireRoot(t)
	if _, err := exec.LookPath("ip"); err != nil {
		t.Fatal("the lab needs ip (apt-get install iproute2)")
	}
	natsBin, _ := binaries(t)
	goClusterBinary(t) // build before the clock matters
	prefix = fmt.Sprintf("%s%d", prefix, os.Getpid())
	n, err := arplab.New(prefix)
	if err != nil {
		t.Fatalf("lab network: %v", err)
	}
	t.Cleanup(n.Close)
	l := &agentLab{t: t, net: n, natsNS: prefix + "-nats", dir: t.TempDir(), agents: map[*arplab.Host]*runProc{}}
	if err := n.AddNS(l.natsNS); err != nil {
		t.Fatal(err)
	}
	l.ip(l.natsNS, "link", "set", "lo", "up")
	for i, h := range n.Hosts {
		side := "to-" + h.ID
		l.ip(l.natsNS, "link", "add", side, "type", "veth", "peer", "name", "nats0", "netns", h.NS)
		l.ip(l.natsNS, "addr", "add", fmt.Sprintf("198.51.100.%d/30", 4*i+1), "dev", side)
		l.ip(l.natsNS, "link", "set", side, "up")
		l.ip(h.NS, "addr", "add", fmt.Sprintf("198.51.100.%d/30", 4*i+2), "dev", "nats0")
		l.ip(h.NS, "link", "set", "nats0", "up")
	}
	l.nats = newNATSProcIn(t, l.natsNS, natsBin, "lab", labNATS, "")
	l.nats.start(t)
	w, err := arplab.WatchARP(arplab.NSPath(n.ObserverNS), arplab.Bridge, netip.MustParseAddr(arplab.VIP), labProbe)
	if err != nil {
		t.Fatalf("the client: %v", err)
	}
	t.Cleanup(w.Close)
	l.watch = w
	return l
}

func (l *agentLab) ip(ns string, args ...string) {
	l.t.Helper()
	if _, err := arplab.IPIn(ns, args...); err != nil {
		l.t.Fatal(err)
	}
}

// a and b are the hosts: a is the preferred one (priority 100).
func (l *agentLab) a() *arplab.Host { return l.net.Hosts[0] }
func (l *agentLab) b() *arplab.Host { return l.net.Hosts[1] }

// natsURL is the server's address as host h reaches it, over its nats0.
func (l *agentLab) natsURL(h *arplab.Host) string {
	i := 0
	if h == l.b() {
		i = 1
	}
	return fmt.Sprintf("nats://198.51.100.%d:%d", 4*i+1, labNATS)
}

// cutNATS takes host h's link to NATS down (on the server's side: h's
// packets go nowhere, as with a pulled cable), or up again.
func (l *agentLab) cutNATS(h *arplab.Host, cut bool) {
	l.t.Helper()
	state := "up"
	if cut {
		state = "down"
	}
	l.ip(l.natsNS, "link", "set", "to-"+h.ID, state)
}

// agentConf is what a host's file says beyond the lab's defaults.
type agentConf struct {
	cluster string
	iface   string // the VIP's interface; default eth0
}

// failFile is the file whose presence makes h's check fail.
func (l *agentLab) failFile(h *arplab.Host) string { return filepath.Join(l.dir, "fail-"+h.ID) }

// config is host h's file as an operator writes it from docs/agent.md and
// packaging/agent.yaml: listen, priorities 100 and 90 (preempt, its delay
// the default), a check, notify commands and a service. The check is a
// file's: an exec check of 90ms timed out twice in a row under CI's load,
// and b took over before the fault TestAgentLabCounts applies (a stat
// does not fork).
func (l *agentLab) config(h *arplab.Host, c agentConf) string {
	prio := 100
	if h == l.b() {
		prio = 90
	}
	iface := c.iface
	if iface == "" {
		iface = arplab.IfName
	}
	notify := func(state string) string {
		return fmt.Sprintf(`[/bin/sh, -c, 'echo "%s $GO_CLUSTER_EVENT $*" >> %s/notify-%s.log', notify]`, state, l.dir, h.ID)
	}
	return fmt.Sprintf(`listen: %s
clusters:
  - name: %s
    connection: {servers: [%q]}
    election: {node_id: host-%s, lease_ttl: %s, priority: %d}
    checks:
      - name: app
        file: {path: %s, present: false}
        interval: 100ms
        timeout: 90ms
        rise: 2
        fall: 2
    vips:
      - address: %s/%d
        interface: %s
        garp: {count: 3, interval: 100ms}
    notify:
      become_leader: %s
      lose_leadership: %s
      fault: %s
    service:
      argv: [/bin/sh, -c, 'echo $$ > %s/svc-%s.pid; exec sleep 1000']
`, labHTTP, c.cluster, l.natsURL(h), h.ID, labTTL, prio, l.failFile(h),
		arplab.VIP, arplab.VIPBits, iface, notify("MASTER"), notify("BACKUP"), notify("FAULT"), l.dir, h.ID)
}

// writeConfig writes h's file and returns its path.
func (l *agentLab) writeConfig(h *arplab.Host, c agentConf) string {
	l.t.Helper()
	l.seq++
	file := filepath.Join(l.dir, fmt.Sprintf("%s-%s-%d.yaml", c.cluster, h.ID, l.seq))
	if err := os.WriteFile(file, []byte(l.config(h, c)), 0o600); err != nil {
		l.t.Fatal(err)
	}
	return file
}

// inHost runs the built go-cluster with args in h's namespace and returns
// its exit code and output.
func (l *agentLab) inHost(h *arplab.Host, args ...string) (int, string) {
	l.t.Helper()
	cmd := exec.Command("ip", append([]string{"netns", "exec", h.NS, goClusterBinary(l.t)}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil && cmd.ProcessState == nil {
		l.t.Fatalf("go-cluster %s in %s: %v", strings.Join(args, " "), h.NS, err)
	}
	return cmd.ProcessState.ExitCode(), string(out)
}

// startAgent starts `go-cluster agent --config FILE` in h's namespace.
func (l *agentLab) startAgent(h *arplab.Host, file string) *runProc {
	l.t.Helper()
	l.seq++
	p := &runProc{node: "agent " + h.ID, stderr: filepath.Join(l.dir, fmt.Sprintf("agent-%s-%d.log", h.ID, l.seq)), exited: make(chan struct{})}
	startArgv(l.t, p, nil, []string{"ip", "netns", "exec", h.NS, goClusterBinary(l.t), "agent", "--config", file})
	l.agents[h] = p
	return p
}

// startPair starts both agents of cluster, a first, and waits until a
// holds the VIP and answers the client, b runs as its follower, and one
// lease_ttl more.
func (l *agentLab) startPair(cluster string) {
	l.t.Helper()
	for _, h := range l.net.Hosts {
		l.startAgent(h, l.writeConfig(h, agentConf{cluster: cluster}))
	}
	l.waitSteady(l.a(), 30*time.Second)
	// A follower this fresh was seen to take a released lease only at
	// its expiry (a SIGTERM taken over after 1,988 ms): the faults are
	// applied to a pair settled for one lease_ttl.
	time.Sleep(labTTL)
}

// waitSteady waits until holder alone has the VIP and answers the client,
// and the other host's agent runs as a follower that knows the leader.
func (l *agentLab) waitSteady(holder *arplab.Host, timeout time.Duration) {
	l.t.Helper()
	other := l.net.Other(holder)
	since := time.Now()
	var state string // what was last seen, for the failure
	if !within(timeout, func() bool {
		l.mustRun()
		h, err := l.net.Holder()
		if err != nil {
			l.t.Fatal(err)
		}
		ok, err := l.watch.Answered(holder.MAC, since)
		if err != nil {
			l.t.Fatalf("the client stopped: %v", err)
		}
		st, herr := l.healthz(other)
		state = fmt.Sprintf("holder %v, %s answered the client %v, %s's /healthz %+v (%v)", h, holder.ID, ok, other.ID, st, herr)
		return h == holder && ok && herr == nil && len(st) == 1 && st[0].Role == "PASSIVE" && st[0].Leader == "host-"+holder.ID
	}) {
		l.t.Fatalf("no steady pair with %s holding the VIP within %v: %s", holder.ID, timeout, state)
	}
}

// mustRun fails the test if an agent has exited.
func (l *agentLab) mustRun() {
	l.t.Helper()
	for h, p := range l.agents {
		if !p.running() {
			l.t.Fatalf("%s's agent exited %d:\n%s", h.ID, p.code, readFile(p.stderr))
		}
	}
}

// clusterHealth is what /healthz says of a cluster, the fields the lab
// reads.
type clusterHealth struct {
	Code   int    `json:"-"`
	Role   string `json:"role"`
	Leader string `json:"leader"`
	Ready  bool   `json:"ready"`
	Reason string `json:"reason"`
}

// healthz asks h's agent for /healthz, from inside h's namespace.
func (l *agentLab) healthz(h *arplab.Host) ([]clusterHealth, error) {
	c := &http.Client{Timeout: time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return netnsDialer(h.NS).Dial(network, addr)
		},
	}}
	resp, err := c.Get("http://" + labHTTP + "/healthz")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var st []clusterHealth
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("/healthz of %s: %w: %s", h.ID, err, b)
	}
	for i := range st {
		st[i].Code = resp.StatusCode
	}
	return st, nil
}

// hasVIPWithPrefix reports whether h's eth0 has the VIP with that prefix
// length.
func (l *agentLab) hasVIPWithPrefix(h *arplab.Host, bits int) bool {
	out, err := arplab.IPIn(h.NS, "-o", "-4", "addr", "show", "dev", arplab.IfName)
	if err != nil {
		l.t.Fatal(err)
	}
	return strings.Contains(string(out), fmt.Sprintf(" %s/%d ", arplab.VIP, bits))
}

// natsLostLine and natsBackLine tell an agent's log lines about losing
// NATS and about having it back, whatever the exact words. A line about
// the loss may say what happens until NATS is back: it counts as a loss.
var (
	natsLostLine = regexp.MustCompile(`(?i)\bnats\b.*\b(lost|disconnected|unreachable)\b|\b(lost|disconnected)\b.*\bnats\b`)
	natsBackLine = regexp.MustCompile(`(?i)\bnats\b.*\b(back|reconnected|restored|regained)\b|\b(reconnected|regained)\b.*\bnats\b`)
)

// natsLogLines are the lines of p's log after its first skip bytes about
// losing NATS and about having it back.
func natsLogLines(p *runProc, skip int) (lost, back []string) {
	b := []byte(readFile(p.stderr))
	skip = min(skip, len(b))
	for _, line := range strings.Split(string(b[skip:]), "\n") {
		switch {
		case natsLostLine.MatchString(line):
			lost = append(lost, line)
		case natsBackLine.MatchString(line):
			back = append(back, line)
		}
	}
	return lost, back
}
