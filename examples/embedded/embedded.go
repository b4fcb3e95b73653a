// Package embedded starts a NATS server with JetStream inside the current
// process, on a loopback port, for the example programs that run with
// nothing installed; public, so that a copy of an example builds. It is
// not test support (tests use clustertest or internal/natstest), and it
// is only for a program whose nodes all use it:
// the in-process demos, or a program asked for it explicitly (-embedded).
// Nodes each on a server of their own would each elect a leader.
package embedded

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// CheckServer is the rule of the programs meant to run as several
// processes: refuse to run without a NATS server (url, from -nats or
// NATS_URL), unless asked to start one (startEmbedded, from -embedded),
// and refuse to be asked both.
func CheckServer(url string, startEmbedded bool) error {
	switch {
	case startEmbedded && url != "":
		return errors.New("-embedded and a NATS server (-nats or NATS_URL) given: choose one")
	case !startEmbedded && url == "":
		return errors.New("no NATS server: give -nats URLS or set NATS_URL, or pass -embedded to start one in this process " +
			"(nodes each on a server of their own would each elect a leader)")
	}
	return nil
}

// readyTimeout bounds how long Start waits for the server to accept
// clients.
const readyTimeout = 10 * time.Second

// JetStream limits: ample for a demo, small enough not to claim the
// machine's memory and disk (the server's default is a share of both).
const (
	maxMemory = 256 << 20
	maxStore  = 1 << 30
)

// Server is a NATS server running in this process, with JetStream and a
// store directory of its own. Close stops it.
type Server struct {
	ns        *server.Server
	dir       string
	url       string
	closeOnce sync.Once
}

// Start starts a server on 127.0.0.1, on a port the system chooses, with a
// fresh temporary store directory, and returns once it accepts clients
// with JetStream enabled (at most 10s).
func Start() (*Server, error) {
	dir, err := os.MkdirTemp("", "go-cluster-embedded-")
	if err != nil {
		return nil, fmt.Errorf("embedded: store directory: %w", err)
	}
	ns, err := server.NewServer(&server.Options{
		ServerName:         "go-cluster-embedded",
		Host:               "127.0.0.1",
		Port:               server.RANDOM_PORT,
		JetStream:          true,
		StoreDir:           dir,
		JetStreamMaxMemory: maxMemory,
		JetStreamMaxStore:  maxStore,
		NoLog:              true,
		NoSigs:             true, // signals are the program's
	})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("embedded: %w", err)
	}
	s := &Server{ns: ns, dir: dir}
	ns.Start()
	if !ns.ReadyForConnections(readyTimeout) {
		s.Close()
		return nil, fmt.Errorf("embedded: the server does not accept clients after %v", readyTimeout)
	}
	if !ns.JetStreamEnabled() {
		s.Close()
		return nil, errors.New("embedded: the server started without JetStream")
	}
	addr, ok := ns.Addr().(*net.TCPAddr)
	if !ok {
		s.Close()
		return nil, fmt.Errorf("embedded: the server listens on %v, not TCP", ns.Addr())
	}
	s.url = "nats://" + net.JoinHostPort(addr.IP.String(), strconv.Itoa(addr.Port))
	return s, nil
}

// URL returns the client URL, nats://127.0.0.1:PORT.
func (s *Server) URL() string { return s.url }

// Close stops the server, waits until it has stopped, and removes its
// store directory. It is idempotent.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.ns.Shutdown()
		s.ns.WaitForShutdown()
		_ = os.RemoveAll(s.dir)
	})
}
