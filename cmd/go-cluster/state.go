package main

// Reading the cluster's fenced state: through the library's own read path,
// an observer node, so that the CLI reads keys, values and epochs exactly
// as the nodes do.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/fenced"
	"github.com/ozanturksever/go-cluster/internal/wire"
	"github.com/ozanturksever/go-cluster/state"
)

// stateReader is an observer node of the cluster, started on the CLI's
// connection for one command. An observer never campaigns and writes
// nothing.
type stateReader struct {
	nc   *nats.Conn
	kv   jetstream.KeyValue // the bucket, for its status
	node *cluster.Node
	e    *env
}

// openState connects, checks that the cluster's bucket exists (an
// observer's Start would create it), and starts an observer on the
// connection. The caller closes the reader.
func (e *env) openState(ctx context.Context) (*stateReader, error) {
	nc, kv, err := e.dialBucket(ctx)
	if err != nil {
		return nil, err
	}
	cfg := observerConfig(e.opts.cluster, nc, e.opts.timeout)
	cfg.JetStreamDomain, cfg.JetStreamAPIPrefix = e.conn.jsDomain, e.conn.jsAPI
	// The node's warnings go where the CLI's errors go; its news does not.
	cfg.Logger = slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	node, err := cluster.NewObserver(cfg, nil)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("observer: %w", err)
	}
	done := e.waiting("opening the state of cluster " + e.opts.cluster)
	sctx, cancel := context.WithTimeout(ctx, e.opts.timeout)
	err = node.Start(sctx)
	cancel()
	done()
	if err != nil {
		nc.Close()
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("%w: opening the bucket took longer than %v: %v", errNoAnswer, e.opts.timeout, err)
		}
		return nil, fmt.Errorf("open the state of cluster %s: %w", e.opts.cluster, err)
	}
	return &stateReader{nc: nc, kv: kv, node: node, e: e}, nil
}

// observerConfig configures the CLI's observer: a node ID of its own, the
// CLI's connection, and requests bounded by --timeout. (The LeaseTTL only
// leaves room for that timeout: an observer never holds the lease.)
func observerConfig(clusterID string, nc *nats.Conn, timeout time.Duration) cluster.Config {
	ttl := min(max(wire.DefaultLeaseTTL, 2*timeout), wire.MaxLeaseTTL)
	return cluster.Config{
		ClusterID:      clusterID,
		NodeID:         "go-cluster-cli-" + strings.TrimPrefix(nats.NewInbox(), nats.InboxPrefix),
		Conn:           nc,
		LeaseTTL:       ttl,
		RequestTimeout: min(timeout, ttl/2),
	}
}

// state is the cluster's state, read through the observer.
func (r *stateReader) state() *state.State { return r.node.State() }

// Close stops the observer and closes the connection.
func (r *stateReader) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), r.e.opts.timeout)
	defer cancel()
	_ = r.node.Stop(ctx) // it writes nothing: there is nothing to report
	r.nc.Close()
}

// lastRevision is the bucket's latest revision: every write stored so far
// has a revision up to it, every later one a higher one.
func (r *stateReader) lastRevision(ctx context.Context) (uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, r.e.opts.timeout)
	defer cancel()
	status, err := r.kv.Status(ctx)
	if err != nil {
		return 0, r.explain("read the bucket's status", err)
	}
	bs, ok := status.(*jetstream.KeyValueBucketStatus)
	if !ok {
		return 0, fmt.Errorf("read the bucket's status: %w: %T", errBadReply, status)
	}
	return bs.StreamInfo().State.LastSeq, nil
}

// explain turns an error of a state read into one of the CLI's: a read
// that took too long is errNoAnswer.
func (r *stateReader) explain(what string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) {
		return fmt.Errorf("%w: %s took longer than %v: %v", errNoAnswer, what, r.e.opts.timeout, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// checkStateKey refuses a key (or prefix) the library would refuse, with
// its error, as a bad argument.
func checkStateKey(key string) error {
	if err := fenced.ValidateKey(key); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	return nil
}
