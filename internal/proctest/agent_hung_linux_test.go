package proctest

import (
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// fakeWatchdog plays systemd's part for one unit: it reads the agent's
// sd_notify datagrams, follows WATCHDOG_USEC= and, when no WATCHDOG=1 came
// for the interval, SIGKILLs the agent (WatchdogSignal=SIGKILL) and runs
// the unit's ExecStopPost=.
type fakeWatchdog struct {
	conn *net.UnixConn
	path string

	mu       sync.Mutex
	interval time.Duration
	last     time.Time // the last ping, or the start
	lowered  bool      // a WATCHDOG_USEC= came
}

func newFakeWatchdog(t *testing.T, interval time.Duration) *fakeWatchdog {
	t.Helper()
	w := &fakeWatchdog{path: filepath.Join(t.TempDir(), "notify.sock"), interval: interval, last: time.Now()}
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: w.path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	w.conn = conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				return
			}
			w.read(string(buf[:n]))
		}
	}()
	t.Cleanup(func() { conn.Close(); <-done })
	return w
}

// read applies one datagram.
func (w *fakeWatchdog) read(msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, l := range strings.Split(msg, "\n") {
		if l == "WATCHDOG=1" {
			w.last = time.Now()
		}
		if v, ok := strings.CutPrefix(l, "WATCHDOG_USEC="); ok {
			if us, err := strconv.Atoi(v); err == nil {
				w.interval, w.lowered, w.last = time.Duration(us)*time.Microsecond, true, time.Now()
			}
		}
	}
}

// expired reports whether the interval has passed without a ping.
func (w *fakeWatchdog) expired() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return time.Since(w.last) > w.interval
}

// TestAgentHungIsKilledBeforeItsLeasePassesOn (issue 33, defect 7): the
// leading agent is paused (SIGSTOP: it cannot renew, nor remove its VIP).
// With the unit's watchdog (played by a fake systemd, at the interval the
// agent asked for) and its ExecStopPost=, the VIP is gone from its host
// before the other host's first gratuitous ARP for it.
func TestAgentHungIsKilledBeforeItsLeasePassesOn(t *testing.T) {
	// Runs alone: a race built from timings (the watchdog's kill and cleanup before the lease passes on).
	requireRoot(t)
	stops := unitLines(t, "ExecStopPost")
	if len(stops) != 1 {
		t.Fatalf("ExecStopPost= lines %q, want 1", stops)
	}
	argv := strings.Fields(strings.TrimLeft(stops[0], "-@:+!"))
	argv[0] = goClusterBinary(t)
	natsBin, _ := binaries(t)
	ns := startNATS(t, natsBin)
	dir := t.TempDir()
	const ip, cidr = "10.88.0.100", "10.88.0.100/24"
	spec := `{address: ` + cidr + `, interface: eth0, netns: %[1]s, garp: {count: 1, refresh: 0s}}`
	a := newVIPHost(t, ns.URL(), dir, "viphung", "a", 100, spec)
	b := newVIPHost(t, ns.URL(), dir, "viphung", "b", 90, spec)
	wd := newFakeWatchdog(t, 3*time.Second) // the unit's WatchdogSec=
	a.agent = &runProc{node: "a", stderr: filepath.Join(t.TempDir(), "a.stderr"), exited: make(chan struct{})}
	startProc(t, a.agent, []string{"NOTIFY_SOCKET=" + wd.path, "WATCHDOG_USEC=3000000"}, "agent", "--config", a.file)
	natstest.WaitFor(t, 15*time.Second, func() bool { return a.has(t, cidr) }, "a never held the VIP")
	b.start(t)
	b.waitHealthz(t, 10*time.Second, `"leader":"a"`, `"ready":true`)
	natstest.WaitFor(t, 5*time.Second, func() bool { wd.mu.Lock(); defer wd.mu.Unlock(); return wd.lowered },
		"a did not set the watchdog's interval")

	ipCmd(t, "-n", b.ns, "addr", "add", "192.0.2.254/24", "dev", "peer0") // the capture needs an IPv4 address
	garp := firstGARP(t, b.ns, "peer0", netip.MustParseAddr(ip))
	vipGone := addrRemoved(t, a.ns, cidr)
	a.agent.signal(syscall.SIGSTOP)
	hung := time.Now()

	// systemd: the watchdog fires, SIGKILL, then ExecStopPost=.
	natstest.WaitFor(t, 10*time.Second, wd.expired, "the watchdog never fired")
	a.agent.signal(syscall.SIGKILL)
	a.agent.waitExit(t, 5*time.Second)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "GO_CLUSTER_CONFIG="+a.file)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ExecStopPost=%s: %v\n%s", stops[0], err, out)
	}

	var gone, announced time.Time
	timeout := time.After(15 * time.Second)
	for gone.IsZero() || announced.IsZero() {
		select {
		case gone = <-vipGone:
		case announced = <-garp:
		case <-timeout:
			t.Fatalf("a's VIP removed %v, b's first GARP %v (zero: not seen)", gone, announced)
		}
	}
	margin := announced.Sub(gone)
	t.Logf("a hung: its VIP gone %v later, b's first GARP %v later: margin %v", gone.Sub(hung).Round(time.Millisecond),
		announced.Sub(hung).Round(time.Millisecond), margin.Round(time.Millisecond))
	if margin <= 0 {
		t.Fatalf("b announced the VIP %v before the hung a's VIP was removed", -margin)
	}
	if !b.has(t, cidr) || a.has(t, cidr) {
		t.Fatalf("after the failover the VIP is not on b alone: a %s", a.addrs(t))
	}
}
