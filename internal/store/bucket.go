package store

// The cluster's bucket as the library creates it: one configuration for
// the Node and for tools that create the bucket ahead of time (go-cluster
// init), so that the two cannot drift apart.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/bucketmeta"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// Options are the operator's settings of a new bucket, checked by the
// caller (cluster.BucketOptions documents them). LeaseTTL is never 0
// here: the caller fills in its default.
type Options struct {
	Replicas  int
	Storage   jetstream.StorageType
	Placement *jetstream.Placement
	LeaseTTL  time.Duration
}

// LeaseHistory is how many revisions of each key a bucket this library
// creates keeps. The election reads no history (docs/design.md §2.4),
// and fenced state checks only the latest revision of the lease key: the
// value stays 8 for people, who read a cluster's last handovers with
// `nats kv history cluster-<id> lease`, for tests, which find a tenure's
// release there, and so that a bucket made now is configured as one
// moved from protocol 1 (init --upgrade changes only its metadata). The
// cost is seven small old messages per key.
const LeaseHistory = 8

// BucketConfig is the configuration of the bucket of clusterID
// (cluster.BucketConfig documents it).
func BucketConfig(clusterID string, opts Options) jetstream.KeyValueConfig {
	replicas := opts.Replicas
	if replicas == 0 {
		replicas = 1
	}
	cfg := jetstream.KeyValueConfig{
		Bucket:      wire.BucketName(clusterID),
		Description: "go-cluster leader election",
		History:     LeaseHistory,
		Replicas:    replicas,
		Storage:     opts.Storage,
		// Lets the cooldown key carry a per-key TTL.
		LimitMarkerTTL: time.Second,
		Metadata:       bucketmeta.ForNewBucket(opts.LeaseTTL, wire.Protocol),
	}
	if p := opts.Placement; p != nil {
		cfg.Placement = &jetstream.Placement{Cluster: p.Cluster, Tags: append([]string(nil), p.Tags...)}
	}
	return cfg
}

// Ensure opens the bucket of clusterID, creating it with BucketConfig when
// absent, and returns its status and whether it created it. An existing
// bucket the election cannot use is refused (CheckBucket). A lookup that
// nobody answers is returned as it is (the caller tells why).
func Ensure(ctx context.Context, js jetstream.JetStream, clusterID string, opts Options) (jetstream.KeyValue, jetstream.KeyValueStatus, bool, error) {
	bucket := wire.BucketName(clusterID)
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
	if err := CheckBucket(status); err != nil {
		return nil, nil, false, err
	}
	return kv, status, created, nil
}
