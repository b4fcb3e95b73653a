package agent

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/engine"
)

// dialNATS dials ep for the agent's connection pool, with the settings
// the library gives a connection it dials itself (engine.DialOptions),
// from timing (a Config with defaults applied: the cluster that dials;
// the clusters sharing the connection mostly share their timings too).
// name is the connection's name in the server's connz; handlers come
// last: they are the ones in use.
func dialNATS(ctx context.Context, name string, ep Endpoint, timing cluster.Config, handlers []nats.Option) (*nats.Conn, error) {
	if len(ep.URLs) == 0 {
		return nil, fmt.Errorf("%w: no NATS server to dial", cluster.ErrInvalidConfig)
	}
	opts := engine.DialOptions(name, ep.URLs, timing.RenewInterval, timing.RequestTimeout)
	for _, o := range append(append([]nats.Option(nil), ep.Options...), handlers...) {
		if err := o(&opts); err != nil {
			return nil, fmt.Errorf("%w: NATS options: %w", cluster.ErrInvalidConfig, err)
		}
	}
	return engine.Connect(ctx, opts)
}

// timingOf is the election's Config with the library's defaults applied:
// the timings the connection of its cluster is dialled with.
func timingOf(e Election) (cluster.Config, error) {
	n, err := cluster.NewNode(e.nodeConfig("c", "n"), nil)
	if err != nil {
		return cluster.Config{}, err
	}
	return n.Config(), nil
}
