package natstest

import (
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Option adjusts the server options before start.
//
// Options are applied once, when the server is created; a restart reuses the
// adjusted options (with the port pinned to the one first bound).
type Option func(*server.Options)

// WithOptions is the generic escape hatch: f may change any server option
// (TLS, authorization, accounts, limits, ...). It runs after the harness
// defaults and, for cluster members, after the cluster settings.
func WithOptions(f func(*server.Options)) Option {
	return Option(f)
}

// JetStream storage limits given to every server: small enough to run many
// servers side by side, large enough for any test of this project.
const (
	defaultMaxMemory = 256 << 20
	defaultMaxStore  = 1 << 30
)

// readyTimeout bounds how long a single server may take to become usable.
const readyTimeout = 10 * time.Second

// baseOptions returns the options every harness server starts from: loopback
// only, a random client port, JetStream on with storeDir, no signal handlers.
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
