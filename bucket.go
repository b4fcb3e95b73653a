package cluster

// The cluster's bucket as the library creates it: one configuration for
// the Node and for tools that create the bucket ahead of time (go-cluster
// init), so that the two cannot drift apart.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/store"
)

// BucketOptions are the settings of a new bucket that are the operator's
// choice; the rest are the election's (see BucketConfig). The zero value
// is one replica in file storage, placed anywhere.
type BucketOptions struct {
	// Replicas is the number of copies of the bucket's stream: 1 to 5; 3
	// (or 5) on a production JetStream cluster. 0 means 1.
	Replicas int
	// Storage is jetstream.FileStorage (the zero value) or
	// jetstream.MemoryStorage. A bucket in memory loses the lease and the
	// fenced state when every server holding it restarts. Where the stream
	// is created again, its new creation time starts the epochs above the
	// old ones (docs/design.md §5.4); a stream that keeps its
	// creation time but loses its messages starts its sequences, and so
	// the epochs it derives from them, again: run go-cluster init --rebase
	// after such a restart, as after a restore (docs/production.md).
	Storage jetstream.StorageType
	// Placement, if set, puts the bucket's stream in a JetStream cluster
	// by name (Cluster), on servers with every one of Tags, or both.
	Placement *jetstream.Placement
	// LeaseTTL is the cluster's one LeaseTTL (docs/design.md I2),
	// written into a new bucket's metadata as go-cluster.lease_ttl and
	// go-cluster.lease_ttl_max; every node adopts the bucket's, whatever
	// its own Config says. 0 means DefaultLeaseTTL; otherwise
	// MinLeaseTTL to MaxLeaseTTL, kept to the millisecond. An existing
	// bucket keeps its own: go-cluster init --lease-ttl changes it.
	LeaseTTL time.Duration
}

// bucketOptions are the Config's settings of a new bucket.
func (c Config) bucketOptions() BucketOptions {
	o := c.Bucket
	o.LeaseTTL = c.LeaseTTL
	return o
}

// validate checks the options; field names the errors carry are prefix
// followed by the option's name ("Bucket.Replicas" for a Config).
func (o BucketOptions) validate(prefix string) error {
	var errs []error
	if o.Replicas < 0 || o.Replicas > 5 {
		errs = append(errs, fmt.Errorf("%w: %sReplicas %d must be between 1 and 5", ErrInvalidConfig, prefix, o.Replicas))
	}
	if o.Storage != jetstream.FileStorage && o.Storage != jetstream.MemoryStorage {
		errs = append(errs, fmt.Errorf("%w: %sStorage %d must be jetstream.FileStorage or jetstream.MemoryStorage", ErrInvalidConfig, prefix, o.Storage))
	}
	if prefix == "" {
		// A Config's LeaseTTL is checked with its other timings, under
		// its own name (Config.validateTimings): not again as a bucket's.
		errs = append(errs, o.validateLeaseTTL())
	}
	if p := o.Placement; p != nil {
		if p.Cluster == "" && len(p.Tags) == 0 {
			errs = append(errs, fmt.Errorf("%w: %sPlacement names neither a cluster nor tags (leave it nil to place the bucket anywhere)", ErrInvalidConfig, prefix))
		}
		if p.Cluster != "" && strings.ContainsAny(p.Cluster, " \t\r\n\f\v") {
			errs = append(errs, fmt.Errorf("%w: %sPlacement.Cluster %q contains white space", ErrInvalidConfig, prefix, p.Cluster))
		}
		for i, tag := range p.Tags {
			if strings.TrimSpace(tag) == "" {
				errs = append(errs, fmt.Errorf("%w: %sPlacement.Tags[%d] is empty", ErrInvalidConfig, prefix, i))
			}
		}
	}
	return errors.Join(errs...)
}

// validateLeaseTTL checks LeaseTTL against the bounds a Config's has.
func (o BucketOptions) validateLeaseTTL() error {
	if o.LeaseTTL != 0 && (o.LeaseTTL < MinLeaseTTL || o.LeaseTTL > MaxLeaseTTL) {
		return fmt.Errorf("%w: LeaseTTL %v must be 0 (DefaultLeaseTTL) or between %v and %v", ErrInvalidConfig, o.LeaseTTL, MinLeaseTTL, MaxLeaseTTL)
	}
	return nil
}

// BucketConfig is the configuration the library creates the bucket of
// clusterID with: BucketName(clusterID), History 8 (for people reading `nats kv history`; the election reads none),
// LimitMarkerTTL 1s (the cooldown key's per-key TTL), no TTL, no value
// size limit, the election's metadata (the cluster's LeaseTTL, as
// go-cluster.lease_ttl and lease_ttl_max, and go-cluster.protocol: the
// protocol version of this library's election) and opts. nats.go adds the
// KV defaults, among them a duplicate window of 2 minutes, which fenced
// state writes rely on.
func BucketConfig(clusterID string, opts BucketOptions) jetstream.KeyValueConfig {
	return store.BucketConfig(clusterID, opts.storeOptions())
}

// storeOptions is the options as the store takes them, LeaseTTL defaulted.
func (o BucketOptions) storeOptions() store.Options {
	return store.Options{Replicas: o.Replicas, Storage: o.Storage, Placement: o.Placement, LeaseTTL: cmp.Or(o.LeaseTTL, DefaultLeaseTTL)}
}

// CreateBucket creates the bucket of clusterID with BucketConfig, as a
// Node's Start does when the bucket is absent, or finds it already there.
// created says which. An existing bucket is used as it is, with the
// settings it has, unless the election cannot work with them (a TTL, or a
// maximum value size below 4 KiB): that is an error wrapping
// ErrBucketConfig and ErrInvalidConfig. It needs the permissions to look
// up and create the bucket ($JS.API.STREAM.INFO, $JS.API.INFO,
// $JS.API.STREAM.CREATE of the stream, under js's prefix).
//
// A bucket created ahead of time makes the first election immediate: a
// node waits the bucket's LeaseTTL ceiling less the age of a bucket in
// which nothing was ever written (docs/design.md P6), so once the
// bucket is older than that the first node to start leads at once. An
// existing bucket keeps its metadata, opts.LeaseTTL aside: go-cluster
// init --lease-ttl changes the TTL of a live bucket.
func CreateBucket(ctx context.Context, js jetstream.JetStream, clusterID string, opts BucketOptions) (kv jetstream.KeyValue, created bool, err error) {
	if err := ValidateIdentifier("ClusterID", clusterID); err != nil {
		return nil, false, err
	}
	if err := opts.validate(""); err != nil {
		return nil, false, err
	}
	kv, _, created, err = store.Ensure(ctx, js, clusterID, opts.storeOptions())
	return kv, created, err
}
