package natstest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ozanturksever/go-cluster/clustertest"
)

// Server is one embedded nats-server with JetStream, running in this process.
// It can be shut down and restarted on the same port and store directory.
// Its methods are safe for concurrent use.
type Server struct {
	srv *clustertest.Server
}

// RunServer starts an embedded JetStream-enabled server on 127.0.0.1 with a
// random free port and a fresh temporary store dir. It registers t.Cleanup
// to shut it down and remove the store, and fails the test if JetStream is
// not usable within 10s.
func RunServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	srv, err := clustertest.StartServer(append([]Option{named("natstest")}, opts...)...)
	if err != nil {
		t.Fatalf("natstest: %v", err)
	}
	t.Cleanup(srv.Close)
	return &Server{srv: srv}
}

// URL returns the client URL, "nats://127.0.0.1:PORT".
func (s *Server) URL() string {
	return s.srv.URL()
}

// Addr returns the client address, "127.0.0.1:PORT". It stays the same
// across restarts.
func (s *Server) Addr() string {
	return strings.TrimPrefix(s.srv.URL(), "nats://")
}

// NATS returns the underlying server, or nil while shut down. The value
// changes on every restart, so do not keep it.
func (s *Server) NATS() *server.Server {
	return s.srv.NATS()
}

// Shutdown stops the server and waits until it is fully shut down. It is
// idempotent.
func (s *Server) Shutdown() {
	s.srv.Shutdown()
}

// Restart shuts the server down if it is running, then starts it again on the
// same port and store directory (JetStream state survives) and waits until it
// is ready. A standalone server is ready when JetStream answers; a cluster
// member when it accepts connections (see [Cluster.Restart] for more).
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	if err := s.srv.Restart(); err != nil {
		t.Fatalf("natstest: %v", err)
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
