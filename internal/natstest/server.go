package natstest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Server is one embedded nats-server with JetStream, running in this process.
// It can be shut down and restarted on the same port and store directory.
// Its methods are safe for concurrent use.
type Server struct {
	clustered bool

	life sync.Mutex // serialises start, Shutdown and Restart

	mu   sync.Mutex // guards the fields below
	opts *server.Options
	ns   *server.Server
}

// RunServer starts an embedded JetStream-enabled server on 127.0.0.1 with a
// random free port and a store dir under t.TempDir(). It registers t.Cleanup
// to shut it down and fails the test if JetStream is not usable within 10s.
func RunServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	o := baseOptions("natstest", t.TempDir())
	applyOptions(o, opts)
	s := &Server{opts: o}
	t.Cleanup(s.Shutdown)

	s.life.Lock()
	defer s.life.Unlock()
	if err := s.start(); err != nil {
		t.Fatalf("natstest: %v", err)
	}
	if err := s.waitJetStream(readyTimeout); err != nil {
		t.Fatalf("natstest: %v", err)
	}
	return s
}

// URL returns the client URL, "nats://127.0.0.1:PORT".
func (s *Server) URL() string {
	return "nats://" + s.Addr()
}

// Addr returns the client address, "127.0.0.1:PORT". It stays the same
// across restarts.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return net.JoinHostPort(s.opts.Host, strconv.Itoa(s.opts.Port))
}

// NATS returns the underlying server, or nil while shut down. The value
// changes on every restart, so do not keep it.
func (s *Server) NATS() *server.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ns
}

// Shutdown stops the server and waits until it is fully shut down. It is
// idempotent.
func (s *Server) Shutdown() {
	s.life.Lock()
	defer s.life.Unlock()
	s.shutdownLocked()
}

// Restart shuts the server down if it is running, then starts it again on the
// same port and store directory (JetStream state survives) and waits until it
// is ready. A standalone server is ready when JetStream answers; a cluster
// member when it accepts connections (see [Cluster.Restart] for more).
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.life.Lock()
	defer s.life.Unlock()
	s.shutdownLocked()
	if err := s.start(); err != nil {
		t.Fatalf("natstest: restart: %v", err)
	}
	if s.clustered {
		return
	}
	if err := s.waitJetStream(readyTimeout); err != nil {
		t.Fatalf("natstest: restart: %v", err)
	}
}

// Connect opens a client connection to this server, closed at test cleanup.
// It fails the test on error. Unless opts say otherwise, the connection
// reconnects forever and quickly (ReconnectWait 25ms, no jitter), which suits
// tests that restart servers or cut connections.
func (s *Server) Connect(t testing.TB, opts ...nats.Option) *nats.Conn {
	t.Helper()
	return connect(t, s.URL(), opts)
}

func connect(t testing.TB, url string, opts []nats.Option) *nats.Conn {
	t.Helper()
	all := append([]nats.Option{
		nats.Name(t.Name()),
		nats.ReconnectWait(25 * time.Millisecond),
		nats.ReconnectJitter(0, 0),
		nats.MaxReconnects(-1),
	}, opts...)
	nc, err := nats.Connect(url, all...)
	if err != nil {
		t.Fatalf("natstest: connect %s: %v", url, err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// start creates and starts a server from s.opts and waits until it accepts
// connections. The first start pins the randomly chosen client port into
// s.opts so that restarts come back on the same address. Callers hold s.life.
func (s *Server) start() error {
	s.mu.Lock()
	o := s.opts.Clone()
	s.mu.Unlock()

	ns, err := server.NewServer(o)
	if err != nil {
		return fmt.Errorf("new server %s: %w", o.ServerName, err)
	}
	lg := &serverLogger{name: o.ServerName}
	ns.SetLoggerV2(lg, false, false, false)
	ns.Start()
	if err := waitAccepting(ns, lg, readyTimeout); err != nil {
		ns.Shutdown()
		ns.WaitForShutdown()
		return fmt.Errorf("server %s: %w", o.ServerName, err)
	}
	lg.started.Store(true)

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.opts.Port <= 0 {
		s.opts.Port = ns.Addr().(*net.TCPAddr).Port
	}
	s.ns = ns
	return nil
}

// shutdownLocked stops the running server, if any. Callers hold s.life.
func (s *Server) shutdownLocked() {
	s.mu.Lock()
	ns := s.ns
	s.ns = nil
	s.mu.Unlock()
	if ns == nil {
		return
	}
	ns.Shutdown()
	ns.WaitForShutdown()
}

// waitAccepting waits until ns listens on all its ports, failing early if the
// server logged a fatal error (the embedded server does not exit on one).
func waitAccepting(ns *server.Server, lg *serverLogger, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if err := lg.err(); err != nil {
			return err
		}
		if ns.ReadyForConnections(50 * time.Millisecond) {
			return lg.err()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not accepting connections after %v", timeout)
		}
	}
}

// waitJetStream waits until a client can use JetStream on this server.
// Callers hold s.life.
func (s *Server) waitJetStream(timeout time.Duration) error {
	nc, err := nats.Connect(s.URL(), nats.NoReconnect(), nats.Timeout(timeout))
	if err != nil {
		return fmt.Errorf("connect %s: %w", s.URL(), err)
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := WaitJetStream(ctx, nc); err != nil {
		return fmt.Errorf("%s: %w", s.URL(), err)
	}
	return nil
}

// WaitJetStream waits until nc's account can use JetStream: the server has
// started it and, in operator mode, resolved the account. It asks for the
// account info until it gets an answer or ctx ends.
func WaitJetStream(ctx context.Context, nc *nats.Conn) error {
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	for {
		actx, acancel := context.WithTimeout(ctx, time.Second)
		_, err := js.AccountInfo(actx)
		acancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("JetStream not usable: %w", errors.Join(err, ctx.Err()))
		case <-time.After(pollInterval):
		}
	}
}
