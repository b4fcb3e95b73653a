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
	"github.com/ozanturksever/go-cluster/internal/election"
)

// BucketOptions are the settings of a new bucket that are the operator's
// choice; the rest are the election's (see BucketConfig). The zero value
// is one replica in file storage, placed anywhere.
type BucketOptions struct {
	// Replicas is the number of copies of the bucket's stream: 1 to 5; 3
	// (or 5) on a production JetStream cluster. 0 means 1.
	Replicas int
	// Storage is jetstream.FileStorage (the zero value) or
	// jetstream.MemoryStorage. A bucket in memory loses the lease, its
	// epoch and the fenced state when every server holding it restarts:
	// the epochs then go on from the running nodes' memory (design §5.4)
	// and, where the stream is created again, from its new creation time
	// (rule 50); a stream that keeps its creation time but loses its
	// messages may lead again at epochs already used.
	Storage jetstream.StorageType
	// Placement, if set, puts the bucket's stream in a JetStream cluster
	// by name (Cluster), on servers with every one of Tags, or both.
	Placement *jetstream.Placement
	// LeaseTTL is the cluster's one LeaseTTL, kept in the new bucket's
	// metadata; 0 means DefaultLeaseTTL. Nodes adopt it.
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

// leaseHistory is how many revisions of each key a bucket this library
// creates keeps.
const leaseHistory = 8

// BucketConfig is the configuration the library creates the bucket of
// clusterID with: BucketName(clusterID), History 8 (past lease records are
// an epoch floor, docs/design.md §2.4), LimitMarkerTTL 1s (the cooldown
// key's per-key TTL), no TTL, no value size limit, and opts. nats.go adds
// the KV defaults, among them a duplicate window of 2 minutes, which fenced
// state writes rely on.
func BucketConfig(clusterID string, opts BucketOptions) jetstream.KeyValueConfig {
	replicas := opts.Replicas
	if replicas == 0 {
		replicas = 1
	}
	cfg := jetstream.KeyValueConfig{
		Bucket:      BucketName(clusterID),
		Description: "go-cluster leader election",
		// Past lease records carry the epoch floor: a node that finds
		// garbage, or missed records while its watch was down, reads
		// them before taking over (see historyFloor).
		History:  leaseHistory,
		Replicas: replicas,
		Storage:  opts.Storage,
		// Lets the cooldown key carry a per-key TTL.
		LimitMarkerTTL: time.Second,
		Metadata:       bucketmeta.ForNewBucket(cmp.Or(opts.LeaseTTL, DefaultLeaseTTL), election.Protocol),
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
// node waits LeaseTTL less the age of a bucket in which nothing was ever
// written (docs/design.md rule 16), so once the bucket is older than
// LeaseTTL the first node to start leads at once.
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
