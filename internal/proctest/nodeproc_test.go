package proctest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// event is one line of a clusternode's stdout (see its Event type).
type event struct {
	TS     int64  `json:"ts"`
	Node   string `json:"node"`
	Event  string `json:"event"`
	Epoch  int64  `json:"epoch"`
	OK     bool   `json:"ok"`
	Leader string `json:"leader"`
	Error  string `json:"error"`

	Seq     int64  `json:"seq"`
	Rev     uint64 `json:"rev"`
	Sent    int64  `json:"sent"`
	Outcome string `json:"outcome"`
}

// SentAt is when a state_put's Put was called.
func (e event) SentAt() time.Time { return time.Unix(0, e.Sent) }

// At is the event's wall-clock time (same machine: comparable with ours).
func (e event) At() time.Time { return time.Unix(0, e.TS) }

// nodeProc is one clusternode process.
type nodeProc struct {
	id     string
	cmd    *exec.Cmd
	exited chan struct{}
	stderr string

	mu     sync.Mutex
	events []event
}

// nodeSettings are the flags every node of a test gets.
type nodeSettings struct {
	bin      string
	cluster  string
	natsURL  string
	fenceURL string
	ttl      time.Duration
	renew    time.Duration
	extra    []string // more flags
}

// startNode starts a clusternode process and waits for its "started" event.
func startNode(t *testing.T, s nodeSettings, id string) *nodeProc {
	t.Helper()
	p := &nodeProc{id: id, stderr: filepath.Join(t.TempDir(), id+".stderr")}
	errFile, err := os.Create(p.stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer errFile.Close()
	args := append([]string{"-cluster", s.cluster, "-node", id, "-nats", s.natsURL, "-fence", s.fenceURL,
		"-ttl", s.ttl.String(), "-renew", s.renew.String()}, s.extra...)
	p.cmd = exec.Command(s.bin, args...)
	p.cmd.Stderr = errFile
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", id, err)
	}
	p.exited = make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var ev event
			if json.Unmarshal(sc.Bytes(), &ev) == nil {
				p.mu.Lock()
				p.events = append(p.events, ev)
				p.mu.Unlock()
			}
		}
		_ = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.signal(syscall.SIGCONT)
		p.signal(syscall.SIGKILL)
		<-p.exited
		if t.Failed() {
			t.Logf("%s events: %s", id, p.describe())
			if data, err := os.ReadFile(p.stderr); err == nil {
				lines := strings.Split(strings.TrimSpace(string(data)), "\n")
				t.Logf("%s stderr (last lines):\n%s", id, strings.Join(lines[max(0, len(lines)-15):], "\n"))
			}
		}
	})
	p.waitEvent(t, 30*time.Second, "started", func(e event) bool { return e.Event == "started" })
	return p
}

// signal sends sig to the process, if it still runs.
func (p *nodeProc) signal(sig syscall.Signal) {
	select {
	case <-p.exited:
	default:
		_ = p.cmd.Process.Signal(sig)
	}
}

// snapshot returns the events so far.
func (p *nodeProc) snapshot() []event {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]event(nil), p.events...)
}

// find returns the first event at or after from that matches.
func (p *nodeProc) find(from time.Time, match func(event) bool) (event, bool) {
	for _, e := range p.snapshot() {
		if !e.At().Before(from) && match(e) {
			return e, true
		}
	}
	return event{}, false
}

// waitEvent waits for an event matching match (at any time) and returns it.
func (p *nodeProc) waitEvent(t *testing.T, timeout time.Duration, what string, match func(event) bool) event {
	t.Helper()
	var found event
	natstest.WaitFor(t, timeout, func() bool {
		var ok bool
		found, ok = p.find(time.Time{}, match)
		return ok
	}, "%s: no %s event within %v; events: %s", p.id, what, timeout, p.describe())
	return found
}

func (p *nodeProc) describe() string {
	var b strings.Builder
	for _, e := range p.snapshot() {
		if e.Event == "write" && e.OK || e.Event == "state_put" && e.OK || e.Event == "state_send" {
			continue // too many to list
		}
		fmt.Fprintf(&b, "\n  %s %s epoch=%d ok=%v leader=%q %s", e.At().Format("15:04:05.000"), e.Event, e.Epoch, e.OK, e.Leader, e.Error)
		if e.Event == "state_put" {
			fmt.Fprintf(&b, " seq=%d outcome=%s sent=%s", e.Seq, e.Outcome, e.SentAt().Format("15:04:05.000"))
		}
	}
	return b.String()
}

// waitLeader waits until one node of nodes has written to the fence
// successfully, and every other node reports it as the leader.
func waitLeader(t *testing.T, nodes []*nodeProc, timeout time.Duration, since time.Time) (*nodeProc, event) {
	t.Helper()
	var leader *nodeProc
	var become event
	natstest.WaitFor(t, timeout, func() bool {
		for _, n := range nodes {
			if w, ok := n.find(since, func(e event) bool { return e.Event == "write" && e.OK }); ok {
				b, _ := n.lastBefore(w.At(), "become")
				leader, become = n, b
				break
			}
		}
		if leader == nil {
			return false
		}
		for _, n := range nodes {
			if n != leader {
				if _, ok := n.find(since, func(e event) bool { return e.Event == "leader" && e.Leader == leader.id }); !ok {
					return false
				}
			}
		}
		return true
	}, "no leader agreed on within %v", timeout)
	return leader, become
}

// lastBefore returns the last event named name at or before at.
func (p *nodeProc) lastBefore(at time.Time, name string) (event, bool) {
	var out event
	var ok bool
	for _, e := range p.snapshot() {
		if e.Event == name && !e.At().After(at) {
			out, ok = e, true
		}
	}
	return out, ok
}

// others returns nodes without n.
func others(nodes []*nodeProc, n *nodeProc) []*nodeProc {
	var out []*nodeProc
	for _, m := range nodes {
		if m != n {
			out = append(out, m)
		}
	}
	return out
}
