package cluster

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/ozanturksever/go-cluster/internal/faultproxy"
	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// silentServer accepts TCP connections and reads what they send, but
// never writes: a server, or a link, that takes the connection and then
// says nothing, so a NATS client waits for the INFO that opens the
// handshake. Closed at test cleanup; its goroutines end by then.
type silentServer struct {
	ln       net.Listener
	accepted chan struct{} // one per connection accepted
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    []net.Conn
}

func newSilentServer(t *testing.T) *silentServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &silentServer{ln: ln, accepted: make(chan struct{}, 64)}
	s.wg.Go(s.accept)
	t.Cleanup(s.close)
	return s
}

func (s *silentServer) addr() string { return s.ln.Addr().String() }

func (s *silentServer) accept() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns = append(s.conns, c)
		s.mu.Unlock()
		select {
		case s.accepted <- struct{}{}:
		default:
		}
		s.wg.Go(func() { _, _ = io.Copy(io.Discard, c) }) // until either side closes it
	}
}

func (s *silentServer) close() {
	_ = s.ln.Close()
	s.mu.Lock()
	for _, c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// dialSlack is how much longer than its Timeout a handshake may take to
// be given up on a loaded machine. nats.go's own default Timeout (2 s),
// which a Node without rule 18's bound would use, is well past
// RequestTimeout (250 ms here) plus it.
const dialSlack = 750 * time.Millisecond

// dialTestRequestTimeout is the RequestTimeout of the dial tests, below
// testRequestTimeout: nats.go's 2 s stays well past it plus dialSlack.
const dialTestRequestTimeout = 250 * time.Millisecond

// Rule 18: a handshake with a server that accepts and never answers is
// given up within RequestTimeout (issue 25: removing the bound, leaving
// nats.go's 2 s, kept every test green). First dial: Start reports
// ErrConnect that soon, though its own ctx would wait 10 s.
func TestStartGivesUpOnAServerThatNeverAnswers(t *testing.T) {
	// Runs alone: it bounds Start's failure from above (RequestTimeout), which load beside it would stretch.
	natstest.CheckLeaks(t)
	silent := newSilentServer(t)
	cfg := testConfig(uniqueClusterID(t), "n1", "nats://"+silent.addr())
	cfg.RequestTimeout = dialTestRequestTimeout
	n, err := NewNode(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	began := time.Now()
	err = n.Start(ctx)
	took := time.Since(began)
	if !errors.Is(err, ErrConnect) {
		t.Fatalf("Start against a silent server: %v, want ErrConnect", err)
	}
	receive(t, silent.accepted, time.Second, "the silent server accepted the dial")
	t.Logf("Start gave up after %v", took)
	if limit := n.Config().RequestTimeout + dialSlack; took > limit {
		t.Errorf("Start gave up on a silent server after %v, want within %v (RequestTimeout + slack)", took, limit)
	}
}

// Rule 18, reconnect: nats.go holds the connection's lock through a
// reconnect handshake, so every request of the node waits behind it. A
// node whose link breaks, and whose reconnect reaches a server that
// accepts and never answers, gives that handshake up within
// RequestTimeout (its connection reports CONNECTING, then RECONNECTING),
// then reconnects to the real server and leads again.
func TestReconnectGivesUpOnAServerThatNeverAnswers(t *testing.T) {
	t.Parallel()
	srv, _, id := setup(t)
	proxy := faultproxy.New(t, srv.Addr())
	silent := newSilentServer(t)
	cfg := testConfig(id, "n1", proxy.URL())
	cfg.RequestTimeout = dialTestRequestTimeout
	n := startNode(t, cfg, newRecorder(), nil)
	waitOneLeader(t, []*Node{n}, 10*time.Second)

	nc := n.Conn()
	type stamped struct {
		status nats.Status
		at     time.Time
	}
	var mu sync.Mutex
	var seen []stamped
	statuses := nc.StatusChanged(nats.CONNECTING, nats.RECONNECTING, nats.CONNECTED)
	var wg sync.WaitGroup
	wg.Go(func() {
		for s := range statuses {
			mu.Lock()
			seen = append(seen, stamped{s, time.Now()})
			mu.Unlock()
		}
	})
	defer wg.Wait()
	defer nc.RemoveStatusListener(statuses)

	// Break the link; a reconnect goes to the silent server.
	proxy.SetTarget(silent.addr())
	proxy.Cut()
	proxy.Restore()
	receive(t, silent.accepted, 5*time.Second, "a reconnect reaching the silent server")
	proxy.SetTarget(srv.Addr()) // the next attempt reaches the real server
	natstest.WaitFor(t, 10*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) > 0 && seen[len(seen)-1].status == nats.CONNECTED
	}, "the node's connection did not reconnect to the real server")

	// Each handshake runs from CONNECTING to the status after it; the one
	// with the silent server is the longest.
	mu.Lock()
	var longest time.Duration
	for i, s := range seen[:len(seen)-1] {
		if s.status == nats.CONNECTING {
			longest = max(longest, seen[i+1].at.Sub(s.at))
		}
	}
	mu.Unlock()
	timeout := n.Config().RequestTimeout
	if longest < timeout/2 {
		t.Fatalf("no handshake with the silent server seen (longest %v)", longest)
	}
	t.Logf("longest reconnect handshake: %v", longest)
	if limit := timeout + dialSlack; longest > limit {
		t.Errorf("a reconnect handshake with a silent server was held %v, want within %v (RequestTimeout + slack)", longest, limit)
	}
	natstest.WaitFor(t, 10*time.Second, n.IsLeader, "the node did not lead again once reconnected")
}
