package natstest

import (
	"github.com/nats-io/nats-server/v2/server"

	"github.com/ozanturksever/go-cluster/clustertest"
)

// Option adjusts the server options before start.
//
// Options are applied once, when the server is created; a restart reuses the
// adjusted options (with the port pinned to the one first bound).
type Option = clustertest.Option

// WithOptions is the generic escape hatch: f may change any server option
// (TLS, authorization, accounts, limits, ...). It runs after the harness
// defaults and, for cluster members, after the cluster settings.
func WithOptions(f func(*server.Options)) Option {
	return clustertest.WithOptions(f)
}

// named gives a standalone server the harness's name.
func named(name string) Option {
	return func(o *server.Options) { o.ServerName = name }
}

// inCluster gives cluster members the harness's cluster name.
func inCluster(name string) Option {
	return func(o *server.Options) { o.Cluster.Name = name }
}
