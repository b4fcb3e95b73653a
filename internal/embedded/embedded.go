// Package embedded starts a real nats-server with JetStream inside the
// current process, for the demo, the runnable examples and the benchmark
// program: nothing needs to be installed. Tests use internal/natstest.
package embedded

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Server is a running embedded server and the store directory it owns.
type Server struct {
	*server.Server
	dir string
}

// Start runs a JetStream-enabled server on 127.0.0.1 with a random port and
// a fresh temporary store directory, and waits until it accepts clients.
func Start() (*Server, error) {
	dir, err := os.MkdirTemp("", "go-cluster-nats-")
	if err != nil {
		return nil, fmt.Errorf("embedded nats: %w", err)
	}
	ns, err := server.NewServer(&server.Options{
		Host:      "127.0.0.1",
		Port:      server.RANDOM_PORT,
		JetStream: true,
		StoreDir:  dir,
		NoLog:     true,
		NoSigs:    true,
	})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("embedded nats: %w", err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		os.RemoveAll(dir)
		return nil, errors.New("embedded nats: not ready after 10s")
	}
	return &Server{Server: ns, dir: dir}, nil
}

// Stop shuts the server down and removes its store directory.
func (s *Server) Stop() {
	s.Shutdown()
	s.WaitForShutdown()
	os.RemoveAll(s.dir)
}
