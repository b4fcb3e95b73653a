package clustertest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
)

// ErrClosed is returned by Restart after Close: the store is gone.
var ErrClosed = errors.New("clustertest: server closed")

// Server is one NATS server with JetStream running in this process. It can
// be shut down and restarted on the same port and store directory, so
// JetStream state survives a restart. Its methods are safe for concurrent
// use.
type Server struct {
	clustered bool   // a cluster member: JetStream needs a quorum, not just this server
	ownDir    string // the store directory this package made, removed by Close

	life sync.Mutex // serialises start, Shutdown, Restart and Close

	mu     sync.Mutex // guards the fields below
	opts   *server.Options
	ns     *server.Server
	closed bool
}

// RunServer starts a server like [StartServer] and stops it, removing its
// store directory, at the end of the test. It fails the test if the server
// cannot start or JetStream is not usable within 10s.
func RunServer(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	s, err := StartServer(opts...)
	if err != nil {
		tb.Fatalf("%v", err)
	}
	tb.Cleanup(s.Close)
	return s
}

// StartServer starts a server on 127.0.0.1 with a random free port and a
// fresh temporary store directory, and returns once a client can use
// JetStream on it (at most 10s). Call Close to stop it and remove the store.
func StartServer(opts ...Option) (*Server, error) {
	s, err := newServer("clustertest", nil, opts)
	if err != nil {
		return nil, err
	}
	s.life.Lock()
	err = s.startLocked()
	s.life.Unlock()
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("clustertest: %w", err)
	}
	return s, nil
}

// newServer prepares, without starting it, a server named name with a new
// temporary store directory. member, when not nil, adds cluster settings
// before opts are applied.
func newServer(name string, member func(*server.Options), opts []Option) (*Server, error) {
	dir, err := os.MkdirTemp("", "nats-"+name+"-")
	if err != nil {
		return nil, fmt.Errorf("clustertest: store directory: %w", err)
	}
	o := baseOptions(name, dir)
	if member != nil {
		member(o)
	}
	applyOptions(o, opts)
	s := &Server{clustered: member != nil, opts: o}
	if o.StoreDir == dir {
		s.ownDir = dir
	} else {
		_ = os.Remove(dir) // an option chose another store; that one is the caller's
	}
	return s, nil
}

// URL returns the client URL, "nats://127.0.0.1:PORT". It stays the same
// across restarts.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return "nats://" + net.JoinHostPort(s.opts.Host, strconv.Itoa(s.opts.Port))
}

// URLs returns []string{s.URL()}, the form cluster.Config.NATSURLs takes.
func (s *Server) URLs() []string {
	return []string{s.URL()}
}

// StoreDir returns the JetStream store directory.
func (s *Server) StoreDir() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opts.StoreDir
}

// NATS returns the running nats-server, for its monitoring methods
// (Varz, Connz, JetStreamIsLeader, ...), or nil while shut down. It
// changes on every restart, so do not keep it.
func (s *Server) NATS() *server.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ns
}

// Shutdown stops the server, keeping its store directory so that Restart
// can bring it back with its state. Clients see the connection drop. It
// waits until the server has stopped and is idempotent.
func (s *Server) Shutdown() {
	s.life.Lock()
	defer s.life.Unlock()
	s.shutdownLocked()
}

// Restart shuts the server down if it is running, then starts it again on
// the same port and store directory. A standalone server is back when
// JetStream answers; a cluster member when it accepts connections, since
// its JetStream needs a quorum of members running. After Close it returns
// ErrClosed.
func (s *Server) Restart() error {
	s.life.Lock()
	defer s.life.Unlock()
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return ErrClosed
	}
	s.shutdownLocked()
	if err := s.startLocked(); err != nil {
		return fmt.Errorf("clustertest: restart: %w", err)
	}
	return nil
}

// Close stops the server and removes the store directory it made (not one
// set through WithOptions). It is idempotent.
func (s *Server) Close() {
	s.life.Lock()
	defer s.life.Unlock()
	s.shutdownLocked()
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	if s.ownDir != "" {
		_ = os.RemoveAll(s.ownDir)
	}
}

// startLocked starts the server and waits until it is ready (see Restart).
// Callers hold s.life.
func (s *Server) startLocked() error {
	if err := s.launch(); err != nil {
		return err
	}
	if s.clustered {
		return nil
	}
	return waitJetStream(s.URL(), serverReadyTimeout)
}

// launch creates and starts a server from s.opts and waits until it
// accepts connections. The first start pins the randomly chosen client port
// into s.opts so that a restart comes back on the same address. Callers
// hold s.life.
func (s *Server) launch() error {
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
	if err := waitAccepting(ns, lg, serverReadyTimeout); err != nil {
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
