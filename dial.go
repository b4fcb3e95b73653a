package cluster

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// dial connects with every URL, the credentials and the caller's options.
func (n *Node) dial(ctx context.Context) (*nats.Conn, error) {
	opts := nats.GetDefaultOptions()
	opts.Servers = n.cfg.NATSURLs
	opts.Name = fmt.Sprintf("go-cluster %s/%s", n.cfg.ClusterID, n.cfg.NodeID)
	opts.MaxReconnect = -1
	opts.ReconnectWait = 250 * time.Millisecond
	opts.ReconnectJitter = 100 * time.Millisecond
	opts.PingInterval = max(n.cfg.RenewInterval, time.Second)
	opts.MaxPingsOut = 3
	// Timeout bounds each dial and handshake, reconnects included, and
	// nats.go holds the connection's lock through a reconnect handshake:
	// every request waits behind it, whatever its ctx. A server that
	// accepts but does not answer (a blackholed link) must not stall
	// renewals past their deadline, so it is kept to RequestTimeout (the
	// first dial is bounded by Start's ctx below as well).
	opts.Timeout = min(max(n.cfg.RequestTimeout, 100*time.Millisecond), nats.DefaultTimeout)
	if n.cfg.NATSCredentials != "" {
		if err := nats.UserCredentials(n.cfg.NATSCredentials)(&opts); err != nil {
			return nil, fmt.Errorf("start: %w: NATSCredentials: %w", ErrInvalidConfig, err)
		}
	}
	for _, o := range n.cfg.NATSOptions {
		if err := o(&opts); err != nil {
			return nil, fmt.Errorf("start: %w: NATSOptions: %w", ErrInvalidConfig, err)
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
			return nil, fmt.Errorf("start: %w (%s): %w", ErrConnect, strings.Join(n.cfg.NATSURLs, ","), r.err)
		}
		return r.nc, nil
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.nc != nil {
				r.nc.Close()
			}
		}()
		return nil, fmt.Errorf("start: %w: %w", ErrConnect, ctx.Err())
	}
}
