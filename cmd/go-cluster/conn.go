package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// connect dials NATS with the resolved connection settings. The caller
// closes the connection.
func (e *env) connect() (*nats.Conn, error) {
	opts, err := e.conn.natsOptions()
	if err != nil {
		return nil, err
	}
	opts = append(opts, nats.Name("go-cluster CLI"), nats.Timeout(e.opts.timeout))
	nc, err := nats.Connect(e.conn.server, opts...)
	if err != nil {
		return nil, fmt.Errorf("%w at %s: %v", errConnect, e.conn.describe(), err)
	}
	return nc, nil
}

// dialBucket connects and binds to the cluster's bucket, as every command
// that reads the lease starts. The caller closes the connection; on error
// it is already closed.
func (e *env) dialBucket(ctx context.Context) (*nats.Conn, jetstream.KeyValue, error) {
	done := e.waiting("connecting to " + e.conn.server)
	defer done()
	nc, err := e.connect()
	if err != nil {
		return nil, nil, err
	}
	kv, err := e.openBucket(ctx, nc)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return nc, kv, nil
}

// openBucket binds to the cluster's bucket without creating it. A missing
// bucket wraps errNoCluster.
func (e *env) openBucket(ctx context.Context, nc *nats.Conn) (jetstream.KeyValue, error) {
	js, err := e.jetStream(nc)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNoJetStream, err)
	}
	ctx, cancel := context.WithTimeout(ctx, e.opts.timeout)
	defer cancel()
	bucket := wire.BucketName(e.opts.cluster)
	kv, err := js.KeyValue(ctx, bucket)
	switch {
	case err == nil:
		return kv, nil
	case errors.Is(err, jetstream.ErrBucketNotFound):
		return nil, fmt.Errorf("%w: %q has no KV bucket %q on %s (check --cluster, and --server or --context; the bucket appears when a node of the cluster first starts)",
			errNoCluster, e.opts.cluster, bucket, nc.ConnectedUrlRedacted())
	case errors.Is(err, jetstream.ErrJetStreamNotEnabled), errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount):
		return nil, fmt.Errorf("%w on %s: %v", errNoJetStream, nc.ConnectedUrlRedacted(), err)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout), errors.Is(err, nats.ErrNoResponders):
		return nil, fmt.Errorf("%w: JetStream did not answer within %v looking up bucket %q: %v", errNoAnswer, e.opts.timeout, bucket, err)
	default:
		return nil, fmt.Errorf("look up bucket %q: %w", bucket, err)
	}
}

// jetStream is the JetStream API of nc, in the domain or under the API
// prefix the context names.
func (e *env) jetStream(nc *nats.Conn) (jetstream.JetStream, error) {
	switch {
	case e.conn.jsDomain != "":
		return jetstream.NewWithDomain(nc, e.conn.jsDomain)
	case e.conn.jsAPI != "":
		return jetstream.NewWithAPIPrefix(nc, e.conn.jsAPI)
	default:
		return jetstream.New(nc)
	}
}
