package clustertest

import (
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Option adjusts a server's options before it first starts. A restart
// reuses the adjusted options, with the client port pinned to the one
// first bound.
type Option func(*server.Options)

// WithOptions lets f change any server option (TLS, authorization,
// accounts, limits, ...). It runs after this package's defaults and, for
// cluster members, after the cluster settings. Readiness is checked by a
// client that connects without credentials or TLS, so a server that
// requires them needs a NoAuthUser with JetStream access.
func WithOptions(f func(*server.Options)) Option {
	return Option(f)
}

// JetStream limits of every server: small enough to run many servers side
// by side, large enough for tests.
const (
	defaultMaxMemory = 256 << 20
	defaultMaxStore  = 1 << 30
)

// Bounds on how long a server, and a cluster, may take to become usable.
const (
	serverReadyTimeout  = 10 * time.Second
	clusterReadyTimeout = 30 * time.Second
)

// baseOptions returns the options every server starts from: loopback only,
// a random client port, JetStream on with storeDir, no signal handlers.
func baseOptions(name, storeDir string) *server.Options {
	return &server.Options{
		ServerName:         name,
		Host:               "127.0.0.1",
		Port:               server.RANDOM_PORT,
		NoSigs:             true,
		NoLog:              true,
		JetStream:          true,
		StoreDir:           storeDir,
		JetStreamMaxMemory: defaultMaxMemory,
		JetStreamMaxStore:  defaultMaxStore,
	}
}

func applyOptions(o *server.Options, opts []Option) {
	for _, opt := range opts {
		if opt != nil {
			opt(o)
		}
	}
}
