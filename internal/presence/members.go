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

// Announce opens (or creates, with opts) the members bucket and writes
// self's member record, of a campaigning node. Best effort, each step
// bounded by timeout (the node's RequestTimeout): a node without
// permission on the members bucket still runs, and shows in `go-cluster
// status` only while it answers. nil when nothing was written.
func Announce(ctx context.Context, js jetstream.JetStream, opts store.Options, self Self, timeout time.Duration, log *slog.Logger) *Announcement {
	data, _ := json.Marshal(wire.MemberRecord{NodeID: self.NodeID, Kind: wire.MemberCampaigning, Metadata: self.Metadata, StartedAt: self.StartedAt.UTC(), Protocols: []int{wire.Protocol, cmp.Or(self.ProtocolHi, wire.ProtocolHi)}})
	a := &Announcement{bucket: wire.MembersBucketName(self.ClusterID), key: wire.MemberKey(self.NodeID)}
	octx, cancel := context.WithTimeout(ctx, timeout)
	kv, _, err := store.EnsureMembers(octx, js, self.ClusterID, opts)
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
