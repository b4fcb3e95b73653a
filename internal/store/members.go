package store

// The members bucket of a cluster whose bucket is marked protocol 3: where
// its nodes announce themselves (internal/presence) and tools list them,
// and its stream's metadata the cluster's TTL ceiling. A cluster of
// protocol 4 keeps both in the account's bucket (account.go). Neither is
// the election's bucket: a write to that one raises its stream's last
// sequence, which fails a pending Create and raises the next jump
// (docs/design.md §2.1).

import (
	"cmp"
	"context"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/bucketmeta"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// MembersBucketConfig is the configuration the library creates the members
// bucket of clusterID with: wire.MembersBucketName(clusterID), History 1
// (only the latest record of each member counts), no TTL (a crashed
// member's record stays, so that it shows as down), opts, as the
// election's bucket (BucketConfig), and the cluster's TTL ceiling,
// go-cluster.lease_ttl_max: kept here, a re-create of the election's
// bucket does not lose it (docs/design.md §2.7).
func MembersBucketConfig(clusterID string, opts Options) jetstream.KeyValueConfig {
	cfg := BucketConfig(clusterID, opts)
	return jetstream.KeyValueConfig{
		Bucket:      wire.MembersBucketName(clusterID),
		Description: "go-cluster members",
		History:     1,
		Replicas:    cfg.Replicas,
		Storage:     cfg.Storage,
		Placement:   cfg.Placement,
		Metadata:    bucketmeta.Meta{MaxTTL: cmp.Or(opts.LeaseTTL, wire.DefaultLeaseTTL)}.Set(nil),
	}
}

// CreateMembers creates the members bucket of clusterID with
// MembersBucketConfig, as a Node's Start does when it is absent, or finds
// it already there; created says which. clusterID and opts are checked
// first. An existing bucket is used as it is. It needs the permissions to
// look up and create the bucket ($JS.API.STREAM.INFO and
// $JS.API.STREAM.CREATE of the stream KV_members-<ClusterID>, under js's
// prefix).
func CreateMembers(ctx context.Context, js jetstream.JetStream, clusterID string, opts Options) (kv jetstream.KeyValue, created bool, err error) {
	if err := wire.CheckIdentifier("ClusterID", clusterID); err != nil {
		return nil, false, err
	}
	if err := opts.Validate(""); err != nil {
		return nil, false, err
	}
	return EnsureMembers(ctx, js, clusterID, opts)
}

// EnsureMembers is CreateMembers without the checks of its arguments.
func EnsureMembers(ctx context.Context, js jetstream.JetStream, clusterID string, opts Options) (jetstream.KeyValue, bool, error) {
	return openOrCreate(ctx, js, MembersBucketConfig(clusterID, opts), createKV)
}

// createKV creates a bucket as jetstream does.
func createKV(ctx context.Context, js jetstream.JetStream, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	return js.CreateKeyValue(ctx, cfg)
}
