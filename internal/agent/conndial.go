package agent

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	cluster "github.com/ozanturksever/go-cluster"
)

// dialNATS dials ep for the agent's connection pool, with the settings
// the library gives a connection it dials itself: reconnect forever
// (cluster.Config.Conn asks for it), quickly, pinging every renew
// interval and bounding each dial by the request timeout, both those of
// timing (a Config with defaults applied: the cluster that dials; the
// clusters sharing the connection mostly share their timings too). name
// is the connection's name in the server's connz; handlers come last:
// they are the ones in use.
func dialNATS(ctx context.Context, name string, ep Endpoint, timing cluster.Config, handlers []nats.Option) (*nats.Conn, error) {
	if len(ep.URLs) == 0 {
		return nil, fmt.Errorf("%w: no NATS server to dial", cluster.ErrInvalidConfig)
	}
	opts := nats.GetDefaultOptions()
	opts.Servers = ep.URLs
	opts.Name = name
	opts.MaxReconnect = -1
	opts.ReconnectWait = 250 * time.Millisecond
	opts.ReconnectJitter = 100 * time.Millisecond
	opts.PingInterval = max(timing.RenewInterval, time.Second)
	opts.MaxPingsOut = 3
	// nats.go holds the connection's lock through a reconnect handshake:
	// a server that accepts but does not answer must not stall renewals
	// past their deadline (as the library's own dial).
	opts.Timeout = min(max(timing.RequestTimeout, 100*time.Millisecond), nats.DefaultTimeout)
	for _, o := range append(append([]nats.Option(nil), ep.Options...), handlers...) {
		if err := o(&opts); err != nil {
			return nil, fmt.Errorf("%w: NATS options: %w", cluster.ErrInvalidConfig, err)
		}
	}
	type result struct {
		nc  *nats.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		nc, err := opts.Connect()
		ch <- result{nc, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, fmt.Errorf("%w (%s): %w", cluster.ErrConnect, strings.Join(ep.URLs, ","), r.err)
		}
		return r.nc, nil
	case <-ctx.Done():
		go func() { // the dial ends within opts.Timeout per server
			if r := <-ch; r.nc != nil {
				r.nc.Close()
			}
		}()
		return nil, fmt.Errorf("%w: %w", cluster.ErrConnect, ctx.Err())
	}
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
