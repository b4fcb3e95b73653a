package health

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// DefaultTimeout is the timeout of a query given a timeout <= 0.
const DefaultTimeout = 2 * time.Second

// Client asks the nodes of one cluster for their health. It needs no NodeID
// and answers nothing, so operators' tools and load balancers use it
// directly; a started Checker has one too. Safe for concurrent use.
type Client struct {
	nc        *nats.Conn
	clusterID string
	log       *slog.Logger
}

// NewClient returns a Client that queries cluster clusterID over nc. It
// does not close nc. Replies that are not health responses are logged to
// slog.Default(). The error wraps ErrInvalidConfig.
func NewClient(nc *nats.Conn, clusterID string) (*Client, error) {
	if nc == nil {
		return nil, fmt.Errorf("health: %w: nil connection", ErrInvalidConfig)
	}
	if err := wire.CheckIdentifier("ClusterID", clusterID); err != nil {
		return nil, fmt.Errorf("health: %w", err)
	}
	return newClient(nc, clusterID, slog.Default().With("component", "health", "cluster", clusterID)), nil
}

func newClient(nc *nats.Conn, clusterID string, log *slog.Logger) *Client {
	return &Client{nc: nc, clusterID: clusterID, log: log}
}

// QueryNode asks node nodeID for its health with an empty request, and
// waits at most timeout (DefaultTimeout if timeout <= 0) or until ctx is
// done. Errors wrap:
//   - ErrNoResponders, as soon as the server reports that nobody answers
//     (no such node, or it is down), without waiting for the timeout;
//   - ErrTimeout when no reply came in time;
//   - ErrRemote when the node answered with an error reply (the Response,
//     with its Error, is returned too);
//   - ErrInvalidResponse when the reply is not a health response;
//   - ErrInvalidConfig when nodeID is not a valid NodeID (wire.CheckNodeID);
//   - ctx.Err() when ctx was cancelled.
func (c *Client) QueryNode(ctx context.Context, nodeID string, timeout time.Duration) (Response, error) {
	if err := wire.CheckNodeID("nodeID", nodeID); err != nil {
		return Response{}, fmt.Errorf("health: query: %w", err)
	}
	subject := NodeSubject(c.clusterID, nodeID)
	ctx, cancel := context.WithTimeout(ctx, orDefault(timeout))
	defer cancel()

	m, err := c.nc.RequestWithContext(ctx, subject, nil)
	if err != nil {
		return Response{}, fmt.Errorf("health: query node %q of cluster %q: %w", nodeID, c.clusterID, classify(ctx, err))
	}
	r, err := decodeResponse(m.Data)
	if err != nil {
		return r, fmt.Errorf("health: query node %q of cluster %q: %w", nodeID, c.clusterID, err)
	}
	if r.NodeID != nodeID {
		return Response{}, fmt.Errorf("health: query node %q of cluster %q: %w: answered by %q", nodeID, c.clusterID, ErrInvalidResponse, r.NodeID)
	}
	return r, nil
}

// QueryCluster asks every node of the cluster at once (one request on
// ClusterSubject, replies gathered on one inbox) and returns the responses
// that arrived within timeout (DefaultTimeout if timeout <= 0), sorted by
// NodeID. It always waits the whole timeout, since it cannot know how many
// nodes there are; use QueryClusterN to return as soon as the expected
// number answered.
//
// Nodes that answered with an error reply are included, with Error set.
// Replies that are not health responses are logged and left out. Errors
// wrap ErrNoResponders (no node is running, reported at once) or, with the
// responses gathered so far, ctx.Err() when ctx is done before the timeout.
func (c *Client) QueryCluster(ctx context.Context, timeout time.Duration) ([]Response, error) {
	return c.gather(ctx, 0, timeout)
}

// QueryClusterN is QueryCluster that returns as soon as n responses have
// arrived. If fewer than n arrive within timeout, it returns those, sorted,
// with an error wrapping ErrTimeout. n <= 0 behaves as QueryCluster.
func (c *Client) QueryClusterN(ctx context.Context, n int, timeout time.Duration) ([]Response, error) {
	return c.gather(ctx, n, timeout)
}

// classify wraps a request error in the package's sentinels.
func classify(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return fmt.Errorf("%w: %w", ErrNoResponders, err)
	case errors.Is(err, nats.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w: %w", ErrTimeout, err)
	default:
		return err // context.Canceled, connection closed, ...
	}
}

func orDefault(timeout time.Duration) time.Duration {
	if timeout <= 0 {
		return DefaultTimeout
	}
	return timeout
}
