package presence

// Member records: each node announces itself at Start and withdraws at
// Stop, so that tools list the members of a cluster, including those that
// crashed (announced, never withdrawn, not answering). One KV write each
// way: nothing in steady state.

import (
	"cmp"
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/store"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// Announcement is where a node wrote its member record, for Withdraw.
type Announcement struct {
	kv     jetstream.KeyValue
	bucket string
	key    string
}

// withdrawTimeout bounds the withdrawal at Stop.
const withdrawTimeout = 2 * time.Second

// Announce writes self's member record, of a campaigning node, into the
// account's bucket (wire.AccountMemberKey), opening or creating the bucket
// with opts; before the record, it sets the cluster's TTL ceiling there if
// the cluster has none (store.CreateCeiling), whether the node may open
// the bucket or not: the largest of this node's LeaseTTL and the TTLs the
// bucket's metadata names, as the first campaigning node's, unless
// go-cluster init set it. Best effort, each step bounded by timeout (the
// node's RequestTimeout): a node without permission on the account's
// bucket still runs, and shows in `go-cluster status` only while it
// answers. nil when no record was written.
func Announce(ctx context.Context, st *store.Store, opts store.Options, self Self, timeout time.Duration, log *slog.Logger) *Announcement {
	a := &Announcement{bucket: wire.AccountBucketName, key: wire.AccountMemberKey(self.ClusterID, self.NodeID)}
	return a.write(ctx, self, timeout, log, func(ctx context.Context) (jetstream.KeyValue, error) {
		kv, _, err := store.EnsureAccount(ctx, st.JetStream(), opts)
		ttl := max(cmp.Or(opts.LeaseTTL, wire.DefaultLeaseTTL), st.MetadataMaxTTL())
		if cerr := store.CreateCeiling(ctx, st.JetStream(), st.API(), self.ClusterID, ttl); cerr != nil {
			log.Warn("could not keep the cluster's TTL ceiling: if the bucket is created again, its first election waits the new bucket's own (docs/design.md §2.7); go-cluster init --lease-ttl sets it",
				"bucket", wire.AccountBucketName, "key", wire.CeilingKey(self.ClusterID), "error", store.Tidy(cerr))
		}
		return kv, err
	})
}

// AnnounceInMembersBucket is Announce for a cluster whose bucket is marked
// protocol 3: the record goes into the members bucket (wire.MemberKey),
// which is created with opts, and the cluster's ceiling with it, if absent
// (store.EnsureMembers).
func AnnounceInMembersBucket(ctx context.Context, st *store.Store, opts store.Options, self Self, timeout time.Duration, log *slog.Logger) *Announcement {
	a := &Announcement{bucket: wire.MembersBucketName(self.ClusterID), key: wire.MemberKey(self.NodeID)}
	return a.write(ctx, self, timeout, log, func(ctx context.Context) (jetstream.KeyValue, error) {
		kv, _, err := store.EnsureMembers(ctx, st.JetStream(), self.ClusterID, opts)
		return kv, err
	})
}

// write opens a's bucket with open and puts self's record under a's key.
func (a *Announcement) write(ctx context.Context, self Self, timeout time.Duration, log *slog.Logger, open func(context.Context) (jetstream.KeyValue, error)) *Announcement {
	data, _ := json.Marshal(wire.MemberRecord{NodeID: self.NodeID, Kind: wire.MemberCampaigning, Metadata: self.Metadata, StartedAt: self.StartedAt.UTC(), Protocols: []int{wire.Protocol, cmp.Or(self.ProtocolHi, wire.ProtocolHi)}})
	octx, cancel := context.WithTimeout(ctx, timeout)
	kv, err := open(octx)
	cancel()
	if err == nil {
		a.kv = kv
		pctx, cancel := context.WithTimeout(ctx, timeout)
		_, err = kv.Put(pctx, a.key, data)
		cancel()
	}
	if err != nil {
		log.Warn("could not announce this node: go-cluster status will not list it once it stops answering",
			"bucket", a.bucket, "key", a.key, "error", store.Tidy(err))
		return nil
	}
	return a
}

// Withdraw deletes the member record, bounded by timeout (the node's
// RequestTimeout) and at most withdrawTimeout (Done waits for it: a node
// cut off shows as down rather than hold up its end); nothing when a is
// nil (not announced).
func (a *Announcement) Withdraw(timeout time.Duration, log *slog.Logger) {
	if a == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), min(timeout, withdrawTimeout))
	defer cancel()
	if err := a.kv.Delete(ctx, a.key); err != nil {
		log.Warn("could not withdraw this node: go-cluster status will list it as down",
			"bucket", a.bucket, "key", a.key, "error", store.Tidy(err))
	}
}
