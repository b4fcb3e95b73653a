// Package embedded starts a real nats-server with JetStream inside the
// current process. It is a thin wrapper over the public package clustertest,
// kept for the callers written before clustertest existed; new code uses
// clustertest.StartServer, which users can import too.
package embedded

import (
	"github.com/nats-io/nats-server/v2/server"

	"github.com/ozanturksever/go-cluster/clustertest"
)

// Server is a running embedded server and the store directory it owns.
type Server struct {
	*server.Server
	srv *clustertest.Server
}

// Start runs a JetStream-enabled server on 127.0.0.1 with a random port and
// a fresh temporary store directory, and waits until JetStream is usable.
func Start() (*Server, error) {
	s, err := clustertest.StartServer()
	if err != nil {
		return nil, err
	}
	return &Server{Server: s.NATS(), srv: s}, nil
}

// Stop shuts the server down and removes its store directory.
func (s *Server) Stop() {
	s.srv.Close()
}
