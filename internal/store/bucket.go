package store

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

// Options are the operator's settings of a new bucket
// (cluster.BucketOptions documents them): 0 Replicas is 1, 0 LeaseTTL is
// wire.DefaultLeaseTTL.
type Options struct {
	Replicas  int
	Storage   jetstream.StorageType
	Placement *jetstream.Placement
	LeaseTTL  time.Duration
}

// Validate checks the options; field names the errors carry are prefix
// followed by the option's name ("Bucket.Replicas" for a Config). Each
// error wraps wire.ErrInvalidConfig.
func (o Options) Validate(prefix string) error {
	var errs []error
	if o.Replicas < 0 || o.Replicas > 5 {
		errs = append(errs, fmt.Errorf("%w: %sReplicas %d must be between 1 and 5", wire.ErrInvalidConfig, prefix, o.Replicas))
	}
	if o.Storage != jetstream.FileStorage && o.Storage != jetstream.MemoryStorage {
		errs = append(errs, fmt.Errorf("%w: %sStorage %d must be jetstream.FileStorage or jetstream.MemoryStorage", wire.ErrInvalidConfig, prefix, o.Storage))
	}
	if prefix == "" {
		// A Config's LeaseTTL is checked with its other timings, under
		// its own name (Config.validateTimings): not again as a bucket's.
		errs = append(errs, o.validateLeaseTTL())
	}
	if p := o.Placement; p != nil {
		if p.Cluster == "" && len(p.Tags) == 0 {
			errs = append(errs, fmt.Errorf("%w: %sPlacement names neither a cluster nor tags (leave it nil to place the bucket anywhere)", wire.ErrInvalidConfig, prefix))
		}
		if p.Cluster != "" && strings.ContainsAny(p.Cluster, " \t\r\n\f\v") {
			errs = append(errs, fmt.Errorf("%w: %sPlacement.Cluster %q contains white space", wire.ErrInvalidConfig, prefix, p.Cluster))
		}
		for i, tag := range p.Tags {
			if strings.TrimSpace(tag) == "" {
				errs = append(errs, fmt.Errorf("%w: %sPlacement.Tags[%d] is empty", wire.ErrInvalidConfig, prefix, i))
			}
		}
	}
	return errors.Join(errs...)
}

// validateLeaseTTL checks LeaseTTL against the bounds a Config's has.
func (o Options) validateLeaseTTL() error {
	if o.LeaseTTL != 0 && (o.LeaseTTL < wire.MinLeaseTTL || o.LeaseTTL > wire.MaxLeaseTTL) {
		return fmt.Errorf("%w: LeaseTTL %v must be 0 (DefaultLeaseTTL) or between %v and %v", wire.ErrInvalidConfig, o.LeaseTTL, wire.MinLeaseTTL, wire.MaxLeaseTTL)
	}
	return nil
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

// BucketConfig is the configuration the library creates the bucket of
// clusterID with: wire.BucketName(clusterID), History LeaseHistory,
// LimitMarkerTTL 1s (the cooldown key's per-key TTL), no TTL, no value
// size limit, the election's metadata (the cluster's LeaseTTL, as
// go-cluster.lease_ttl and lease_ttl_max, and go-cluster.protocol:
// wire.BucketProtocol, a cluster whose ceiling and members are in the
// account's bucket) and opts. nats.go adds the
// KV defaults, among them a duplicate window of 2 minutes, which fenced
// state writes rely on.
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
		Metadata:       bucketmeta.ForNewBucket(cmp.Or(opts.LeaseTTL, wire.DefaultLeaseTTL), wire.BucketProtocol),
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
	kv, created, err := openOrCreate(ctx, js, BucketConfig(clusterID, opts), createElectionBucket)
	if err != nil {
		return nil, nil, false, err
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

// Create creates the bucket of clusterID with BucketConfig, as a Node's
// Start does when the bucket is absent, or finds it already there.
// created says which. clusterID and opts are checked first (errors
// wrapping wire.ErrInvalidConfig). An existing bucket is used as it is,
// with the settings it has, unless the election cannot work with them (a
// TTL, or a maximum value size below 4 KiB): that is an error wrapping
// wire.ErrBucketConfig and wire.ErrInvalidConfig. It needs the permissions
// to look up and create the bucket ($JS.API.STREAM.INFO, $JS.API.INFO,
// $JS.API.STREAM.CREATE of the stream, under js's prefix).
//
// A bucket created ahead of time makes the first election immediate: a
// node waits the bucket's LeaseTTL ceiling less the age of a bucket in
// which nothing was ever written (docs/design.md P6), so once the
// bucket is older than that the first node to start leads at once. An
// existing bucket keeps its metadata, opts.LeaseTTL aside: go-cluster
// init --lease-ttl changes the TTL of a live bucket.
func Create(ctx context.Context, js jetstream.JetStream, clusterID string, opts Options) (kv jetstream.KeyValue, created bool, err error) {
	if err := wire.CheckIdentifier("ClusterID", clusterID); err != nil {
		return nil, false, err
	}
	if err := opts.Validate(""); err != nil {
		return nil, false, err
	}
	kv, _, created, err = Ensure(ctx, js, clusterID, opts)
	return kv, created, err
}

// openOrCreate opens the bucket of cfg, creating it with create when
// absent; created says which. A bucket another node created first, with
// other settings maybe, is opened as it is.
func openOrCreate(ctx context.Context, js jetstream.JetStream, cfg jetstream.KeyValueConfig,
	create func(context.Context, jetstream.JetStream, jetstream.KeyValueConfig) (jetstream.KeyValue, error)) (jetstream.KeyValue, bool, error) {
	kv, err := js.KeyValue(ctx, cfg.Bucket)
	created := false
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = create(ctx, js, cfg)
		created = err == nil
		if errors.Is(err, jetstream.ErrBucketExists) || errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			kv, err = js.KeyValue(ctx, cfg.Bucket)
		}
	}
	if err != nil {
		return nil, false, fmt.Errorf("open bucket %q: %w", cfg.Bucket, err)
	}
	return kv, created, nil
}

// createElectionBucket creates the election's bucket as jetstream's
// CreateKeyValue makes a bucket of cfg, with one setting it cannot give:
// the stream's first sequence is the creator's clock in µs (first_seq),
// so that no revision of a bucket deleted before is ever a revision of
// this one, and a compare-and-swap lands only in the incarnation whose
// revision it names (docs/design.md §2.1).
func createElectionBucket(ctx context.Context, js jetstream.JetStream, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	// As CreateKeyValue: the account's API level tells whether the
	// server takes per-message TTLs (LimitMarkerTTL).
	info, err := js.AccountInfo(ctx)
	if err != nil {
		return nil, err
	}
	if cfg.LimitMarkerTTL != 0 && info.API.Level < 1 {
		return nil, jetstream.ErrLimitMarkerTTLNotSupported
	}
	sc := kvStreamConfig(cfg)
	sc.FirstSeq = uint64(max(time.Now().UnixMicro(), 1))
	if _, err := js.CreateStream(ctx, sc); err != nil {
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return nil, fmt.Errorf("%w: %w", jetstream.ErrBucketExists, err)
		}
		return nil, err
	}
	return js.KeyValue(ctx, cfg.Bucket)
}

// kvStreamConfig is the stream jetstream's CreateKeyValue makes for cfg
// (nats.go v1.55.0, jetstream/kv.go, prepareKeyValueConfig), as far as a
// bucket of this library's uses: no TTL, no mirror or sources, no
// compression; a LimitMarkerTTL allows per-message TTLs.
func kvStreamConfig(cfg jetstream.KeyValueConfig) jetstream.StreamConfig {
	history := int64(max(cfg.History, 1))
	replicas := max(cfg.Replicas, 1)
	maxBytes, maxMsgSize := cfg.MaxBytes, cfg.MaxValueSize
	if maxBytes == 0 {
		maxBytes = -1
	}
	if maxMsgSize == 0 {
		maxMsgSize = -1
	}
	return jetstream.StreamConfig{
		Name:                   wire.KVStream(cfg.Bucket),
		Description:            cfg.Description,
		Subjects:               []string{wire.KVSubject(cfg.Bucket, ">")},
		MaxMsgsPerSubject:      history,
		MaxBytes:               maxBytes,
		MaxMsgSize:             maxMsgSize,
		Storage:                cfg.Storage,
		Replicas:               replicas,
		Placement:              cfg.Placement,
		AllowRollup:            true,
		DenyDelete:             true,
		Duplicates:             2 * time.Minute,
		MaxMsgs:                -1,
		MaxConsumers:           -1,
		AllowDirect:            true,
		Discard:                jetstream.DiscardNew,
		AllowMsgTTL:            cfg.LimitMarkerTTL != 0,
		SubjectDeleteMarkerTTL: cfg.LimitMarkerTTL,
		Metadata:               cfg.Metadata,
	}
}
