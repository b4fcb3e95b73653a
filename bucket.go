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
	"github.com/ozanturksever/go-cluster/internal/bucketmeta"
	"github.com/ozanturksever/go-cluster/internal/wire"
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
	return BucketOptions{Replicas: c.BucketReplicas, Storage: c.BucketStorage, Placement: c.BucketPlacement, LeaseTTL: c.LeaseTTL}
}

// validate checks the options; field names the errors carry are prefix
// followed by the option's name ("BucketReplicas" for a Config).
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

// leaseHistory is how many revisions of each key a bucket this library
// creates keeps. The election reads no history (docs/design.md §2.4),
// and fenced state checks only the latest revision of the lease key: the
// value stays 8 for people, who read a cluster's last handovers with
// `nats kv history cluster-<id> lease`, for tests, which find a tenure's
// release there, and so that a bucket made now is configured as one
// moved from protocol 1 (init --upgrade changes only its metadata). The
// cost is seven small old messages per key.
const leaseHistory = 8

// BucketConfig is the configuration the library creates the bucket of
// clusterID with: BucketName(clusterID), History 8 (see leaseHistory),
// LimitMarkerTTL 1s (the cooldown key's per-key TTL), no TTL, no value
// size limit, the election's metadata (the cluster's LeaseTTL, as
// go-cluster.lease_ttl and lease_ttl_max, and go-cluster.protocol: the
// protocol version of this library's election) and opts. nats.go adds the
// KV defaults, among them a duplicate window of 2 minutes, which fenced
// state writes rely on.
func BucketConfig(clusterID string, opts BucketOptions) jetstream.KeyValueConfig {
	replicas := opts.Replicas
	if replicas == 0 {
		replicas = 1
	}
	cfg := jetstream.KeyValueConfig{
		Bucket:      BucketName(clusterID),
		Description: "go-cluster leader election",
		History:     leaseHistory,
		Replicas:    replicas,
		Storage:     opts.Storage,
		// Lets the cooldown key carry a per-key TTL.
		LimitMarkerTTL: time.Second,
		Metadata:       bucketmeta.ForNewBucket(cmp.Or(opts.LeaseTTL, DefaultLeaseTTL), wire.Protocol),
	}
	if p := opts.Placement; p != nil {
		cfg.Placement = &jetstream.Placement{Cluster: p.Cluster, Tags: append([]string(nil), p.Tags...)}
	}
	return cfg
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
	kv, _, created, err = ensureBucket(ctx, js, clusterID, opts)
	return kv, created, err
}

// ensureBucket is CreateBucket without the checks of its arguments: it
// also returns the bucket's status, which the Node reads on. A lookup
// that nobody answers is returned as it is (the caller tells why).
func ensureBucket(ctx context.Context, js jetstream.JetStream, clusterID string, opts BucketOptions) (jetstream.KeyValue, jetstream.KeyValueStatus, bool, error) {
	bucket := BucketName(clusterID)
	kv, err := js.KeyValue(ctx, bucket)
	created := false
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = js.CreateKeyValue(ctx, BucketConfig(clusterID, opts))
		created = err == nil
		if errors.Is(err, jetstream.ErrBucketExists) || errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			// Another node created it first with other settings: use it.
			kv, err = js.KeyValue(ctx, bucket)
		}
	}
	if err != nil {
		return nil, nil, false, fmt.Errorf("open bucket %q: %w", bucket, err)
	}
	status, err := kv.Status(ctx)
	if err != nil {
		return nil, nil, false, fmt.Errorf("bucket %q status: %w", bucket, err)
	}
	if err := checkBucket(status); err != nil {
		return nil, nil, false, err
	}
	return kv, status, created, nil
}
