package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// dial connects with every URL, the credentials and the caller's options.
func (e *Engine) dial(ctx context.Context) (*nats.Conn, error) {
	cfg := e.cfg
	opts := DialOptions(fmt.Sprintf("go-cluster %s/%s", cfg.ClusterID, e.p.NodeID), cfg.URLs, e.p.RenewInterval, e.p.RequestTimeout)
	if cfg.Credentials != "" {
		if err := nats.UserCredentials(cfg.Credentials)(&opts); err != nil {
			return nil, fmt.Errorf("start: %w: NATSCredentials: %w", wire.ErrInvalidConfig, err)
		}
	}
	for _, o := range cfg.NATSOptions {
		if err := o(&opts); err != nil {
			return nil, fmt.Errorf("start: %w: NATSOptions: %w", wire.ErrInvalidConfig, err)
		}
	}
	nc, err := Connect(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("start: %w", err)
	}
	return nc, nil
}

// DialOptions are the options of a connection a node dials (or the
// agent, for the nodes that share it), named name in the server's connz:
// reconnect forever (Config.Conn asks for it), quickly, and ping every
// renewal interval.
func DialOptions(name string, urls []string, renew, request time.Duration) nats.Options {
	opts := nats.GetDefaultOptions()
	opts.Servers = urls
	opts.Name = name
	opts.MaxReconnect = -1
	opts.ReconnectWait = 250 * time.Millisecond
	opts.ReconnectJitter = 100 * time.Millisecond
	opts.PingInterval = max(renew, time.Second)
	opts.MaxPingsOut = 3
	// Timeout bounds each dial and handshake, reconnects included, and
	// nats.go holds the connection's lock through a reconnect handshake:
	// every request waits behind it, whatever its ctx. A server that
	// accepts but does not answer (a blackholed link) must not stall
	// renewals past their deadline, so it is kept to RequestTimeout (the
	// first dial is bounded by Connect's ctx as well).
	opts.Timeout = min(max(request, 100*time.Millisecond), nats.DefaultTimeout)
	return opts
}

// Connect dials opts within ctx; its errors wrap wire.ErrConnect, naming
// the servers. A dial given up on is closed once it ends (within
// opts.Timeout per server).
func Connect(ctx context.Context, opts nats.Options) (*nats.Conn, error) {
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
			return nil, fmt.Errorf("%w (%s): %w", wire.ErrConnect, strings.Join(opts.Servers, ","), r.err)
		}
		return r.nc, nil
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.nc != nil {
				r.nc.Close()
			}
		}()
		return nil, fmt.Errorf("%w: %w", wire.ErrConnect, ctx.Err())
	}
}

// backoff is capped exponential backoff with full jitter over its upper half.
func backoff(attempt int, base, limit time.Duration) time.Duration {
	d := base << min(attempt-1, 16)
	if d <= 0 || d > limit {
		d = limit
	}
	return d/2 + rand.N(d/2+1)
}
