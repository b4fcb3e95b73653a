package cluster

// Member records: each node announces itself at Start and withdraws at
// Stop, so that tools list the members of a cluster, including those that
// crashed (announced, never withdrawn, not answering). The records live in
// a bucket of their own, MembersBucketName: a write to the election's
// bucket raises its stream's last sequence, which fails a pending Create
// and raises the next jump (docs/design.md §2.1). One KV write each way:
// nothing in steady state.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/store"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// MembersBucketName is the KV bucket of a cluster's member records:
// "members-<ClusterID>". It is not part of the election: no decision reads
// it, and a node that cannot reach it elects all the same. (Not
// "cluster-<ClusterID>-members", the election bucket of the ClusterID
// "<ClusterID>-members".)
func MembersBucketName(clusterID string) string { return wire.MembersBucketName(clusterID) }

// MembersBucketConfig is the configuration the library creates the members
// bucket of clusterID with: MembersBucketName(clusterID), History 1 (only
// the latest record of each member counts), no TTL (a crashed member's
// record stays, so that it shows as down), and opts, as the election's
// bucket (BucketConfig).
func MembersBucketConfig(clusterID string, opts BucketOptions) jetstream.KeyValueConfig {
	cfg := BucketConfig(clusterID, opts)
	return jetstream.KeyValueConfig{
		Bucket:      MembersBucketName(clusterID),
		Description: "go-cluster members",
		History:     1,
		Replicas:    cfg.Replicas,
		Storage:     cfg.Storage,
		Placement:   cfg.Placement,
	}
}

// CreateMembersBucket creates the members bucket of clusterID with
// MembersBucketConfig, as a Node's Start does when it is absent, or finds
// it already there; created says which. An existing bucket is used as it
// is. It needs the permissions to look up and create the bucket
// ($JS.API.STREAM.INFO and $JS.API.STREAM.CREATE of the stream
// KV_members-<ClusterID>, under js's prefix).
func CreateMembersBucket(ctx context.Context, js jetstream.JetStream, clusterID string, opts BucketOptions) (kv jetstream.KeyValue, created bool, err error) {
	if err := ValidateIdentifier("ClusterID", clusterID); err != nil {
		return nil, false, err
	}
	if err := opts.validate(""); err != nil {
		return nil, false, err
	}
	return ensureMembersBucket(ctx, js, clusterID, opts)
}

// ensureMembersBucket is CreateMembersBucket without the checks of its
// arguments.
func ensureMembersBucket(ctx context.Context, js jetstream.JetStream, clusterID string, opts BucketOptions) (jetstream.KeyValue, bool, error) {
	bucket := MembersBucketName(clusterID)
	kv, err := js.KeyValue(ctx, bucket)
	created := false
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = js.CreateKeyValue(ctx, MembersBucketConfig(clusterID, opts))
		created = err == nil
		if errors.Is(err, jetstream.ErrBucketExists) || errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			// Another node created it first: use it.
			kv, err = js.KeyValue(ctx, bucket)
		}
	}
	if err != nil {
		return nil, false, fmt.Errorf("open bucket %q: %w", bucket, err)
	}
	return kv, created, nil
}

// MemberKeyPrefix starts the key of every member record: the members are
// the keys "member.*" of the members bucket (MembersBucketName), listed
// with one filtered watch.
const MemberKeyPrefix = "member."

// MemberKey is the key of node nodeID's member record:
// "member.<NodeIDToken(nodeID)>" ("member.db1=example=com" for
// "db1.example.com"): exactly two tokens, since a token has no '.'. NATS
// permissions must let each node write its own.
func MemberKey(nodeID string) string { return MemberKeyPrefix + NodeIDToken(nodeID) }

// Kinds of member (MemberRecord.Kind).
const (
	MemberCampaigning = "campaigning" // made by NewNode: may lead
	// MemberObserver is kept for tools: observers answer status requests
	// but do not announce themselves.
	MemberObserver = "observer"
)

// MemberRecord is the value of a member key: a node's announcement,
// written once at Start. At Stop the node deletes the key (a KV delete
// marker): a key present with a record names a node that started and did
// not stop, running or crashed. Whether it runs, its status request tells
// (StatusSubject).
type MemberRecord struct {
	NodeID string `json:"node_id"`
	// Kind is MemberCampaigning or MemberObserver.
	Kind string `json:"kind"`
	// Metadata is the node's Config.Metadata.
	Metadata map[string]string `json:"metadata,omitempty"`
	// StartedAt is when the node started, by its own wall clock.
	StartedAt time.Time `json:"started_at"`
}

// DecodeMemberRecord parses the value of a member key; the error wraps
// ErrInvalidConfig when it is not a record with a valid NodeID.
func DecodeMemberRecord(data []byte) (MemberRecord, error) {
	var r MemberRecord
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("%w: member record: %w", ErrInvalidConfig, err)
	}
	if err := ValidateNodeID("member record node_id", r.NodeID); err != nil {
		return r, err
	}
	return r, nil
}

// MemberKeys is the key filter of every member record: "member.*".
const MemberKeys = MemberKeyPrefix + "*"

// announcement is where a node wrote its member record, for withdraw.
type announcement struct {
	kv  jetstream.KeyValue
	key string
}

// withdrawTimeout bounds the withdrawal at Stop.
const withdrawTimeout = 2 * time.Second

// announce opens (or creates) the members bucket and writes this node's
// member record. Best effort, each step bounded by RequestTimeout: a node
// without permission on the members bucket still runs, and shows in
// `go-cluster status` only while it answers. nil when nothing was written.
func (n *Node) announce(ctx context.Context, js jetstream.JetStream, startedAt time.Time) *announcement {
	kind := MemberCampaigning
	if !n.campaign {
		kind = MemberObserver
	}
	data, _ := json.Marshal(MemberRecord{NodeID: n.cfg.NodeID, Kind: kind, Metadata: n.cfg.Metadata, StartedAt: startedAt.UTC()})
	a := &announcement{key: MemberKey(n.cfg.NodeID)}
	octx, cancel := context.WithTimeout(ctx, n.cfg.RequestTimeout)
	kv, _, err := ensureMembersBucket(octx, js, n.cfg.ClusterID, n.cfg.bucketOptions())
	cancel()
	if err == nil {
		a.kv = kv
		pctx, cancel := context.WithTimeout(ctx, n.cfg.RequestTimeout)
		_, err = kv.Put(pctx, a.key, data)
		cancel()
	}
	if err != nil {
		n.log.Warn("could not announce this node: go-cluster status will not list it once it stops answering",
			"bucket", MembersBucketName(n.cfg.ClusterID), "key", a.key, "error", store.Tidy(err))
		return nil
	}
	return a
}

// withdraw deletes this node's member record, bounded by RequestTimeout
// and at most withdrawTimeout (Done waits for it: a node cut off shows as
// down rather than hold up its end); nothing when it was not announced.
func (n *Node) withdraw(a *announcement) {
	if a == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), min(n.cfg.RequestTimeout, withdrawTimeout))
	defer cancel()
	if err := a.kv.Delete(ctx, a.key); err != nil {
		n.log.Warn("could not withdraw this node: go-cluster status will list it as down",
			"bucket", MembersBucketName(n.cfg.ClusterID), "key", a.key, "error", store.Tidy(err))
	}
}
