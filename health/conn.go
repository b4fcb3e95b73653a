package health

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// defaultDialTimeout bounds the dial to each server when ctx has no deadline.
const defaultDialTimeout = 5 * time.Second

// dial connects to every URL of cfg (the client picks one and fails over to
// the others), reconnecting forever once connected.
func dial(ctx context.Context, cfg Config) (*nats.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConnect, err)
	}
	timeout := defaultDialTimeout
	if dl, ok := ctx.Deadline(); ok {
		if left := time.Until(dl); left < timeout {
			timeout = max(left, time.Millisecond)
		}
	}
	opts := []nats.Option{
		nats.Name("go-cluster health " + cfg.ClusterID + "/" + cfg.NodeID),
		nats.MaxReconnects(-1),
		nats.Timeout(timeout),
	}
	if cfg.NATSCredentials != "" {
		opts = append(opts, nats.UserCredentials(cfg.NATSCredentials))
	}
	opts = append(opts, cfg.NATSOptions...)
	nc, err := nats.Connect(strings.Join(cfg.NATSURLs, ","), opts...)
	if err != nil {
		return nil, fmt.Errorf("%w (%s): %w", ErrConnect, strings.Join(cfg.NATSURLs, ", "), err)
	}
	if err := ctx.Err(); err != nil {
		nc.Close()
		return nil, fmt.Errorf("%w: %w", ErrConnect, err)
	}
	return nc, nil
}
