package proctest

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// notifySocket is a fake systemd: it records the datagrams sent to
// $NOTIFY_SOCKET.
type notifySocket struct {
	path string
	conn *net.UnixConn
	mu   sync.Mutex
	msgs []string
	done chan struct{}
}

func newNotifySocket(t *testing.T) *notifySocket {
	t.Helper()
	s := &notifySocket{path: filepath.Join(t.TempDir(), "notify.sock"), done: make(chan struct{})}
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: s.path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	s.conn = conn
	go func() {
		defer close(s.done)
		buf := make([]byte, 4096)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				return
			}
			s.mu.Lock()
			s.msgs = append(s.msgs, string(buf[:n]))
			s.mu.Unlock()
		}
	}()
	t.Cleanup(func() { conn.Close(); <-s.done })
	return s
}

// count is how many datagrams have a line equal to line.
func (s *notifySocket) count(line string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, m := range s.msgs {
		for _, l := range strings.Split(m, "\n") {
			if l == line {
				n++
			}
		}
	}
	return n
}

// lines are the first lines of the datagrams, in order.
func (s *notifySocket) firstLines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, m := range s.msgs {
		first, _, _ := strings.Cut(m, "\n")
		out = append(out, first)
	}
	return out
}

// TestAgentSystemdNotify: with $NOTIFY_SOCKET and $WATCHDOG_USEC the agent
// reports READY=1 with a STATUS, pings the watchdog, brackets a reload
// with RELOADING=1 and READY=1, and says STOPPING=1 on SIGTERM.
func TestAgentSystemdNotify(t *testing.T) {
	t.Parallel()
	natsBin, _ := binaries(t)
	ns := startNATS(t, natsBin)
	sock := newNotifySocket(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "a.yaml")
	conf := fmt.Sprintf("clusters:\n  - name: agentsd\n    connection: {servers: [%q]}\n    election: {node_id: a, lease_ttl: 1s}\n", ns.URL())
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &runProc{node: "a", stderr: filepath.Join(t.TempDir(), "a.stderr"), exited: make(chan struct{})}
	startProc(t, p, []string{"NOTIFY_SOCKET=" + sock.path, "WATCHDOG_USEC=200000"}, "agent", "--config", file)

	natstest.WaitFor(t, 10*time.Second, func() bool { return sock.count("READY=1") == 1 }, "no READY=1")
	natstest.WaitFor(t, 10*time.Second, func() bool { return sock.count("WATCHDOG=1") >= 3 }, "no watchdog pings")
	natstest.WaitFor(t, 10*time.Second, func() bool { return sock.count("STATUS=agentsd: leader") > 0 }, "no STATUS with the role: %q",
		lazy(func() string { return strings.Join(sock.firstLines(), " | ") }))
	p.signal(syscall.SIGHUP)
	natstest.WaitFor(t, 10*time.Second, func() bool { return sock.count("RELOADING=1") == 1 && sock.count("READY=1") == 2 }, "no RELOADING=1 then READY=1")
	p.signal(syscall.SIGTERM)
	if code := p.waitExit(t, 10*time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
	// Sent before the exit, read by the socket's goroutine maybe after it.
	natstest.WaitFor(t, 5*time.Second, func() bool { return sock.count("STOPPING=1") == 1 }, "no STOPPING=1: %q",
		lazy(func() string { return strings.Join(sock.firstLines(), " | ") }))
	lines := sock.firstLines()
	if lines[0] != "READY=1" {
		t.Fatalf("first message %q, want READY=1", lines[0])
	}
}
