package bucketmeta

// Changes of a live bucket's metadata, as go-cluster init makes them: each
// a read-modify-write of the stream's configuration that keeps everything
// else in it, the server's own metadata keys (_nats.*) included.

import (
	"context"
	"fmt"
	"maps"
	"math"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ozanturksever/go-cluster/internal/wire"
)

// Change is a bucket's metadata before and after a change.
type Change struct {
	Before, After Meta
	// Created is the stream's creation time and FirstSeq its first_seq:
	// with After.EpochBase, the incarnation's identity.
	Created  time.Time
	FirstSeq uint64
}

// Base is the epoch every record of the bucket's incarnation is above
// after the change: its first sequence less one, or its epoch_base when
// that is larger (docs/design.md §2.1).
func (c Change) Base() int64 { return Base(c.FirstSeq, c.After.EpochBase) }

// Base is the epoch base of an incarnation whose stream's first_seq is
// firstSeq (0 when not set) and whose metadata holds epochBase (0 when
// absent).
func Base(firstSeq uint64, epochBase int64) int64 {
	return max(int64(min(max(firstSeq, 1)-1, math.MaxInt64/2)), epochBase, 0)
}

// Index is a sequence's place in an incarnation whose first_seq is
// firstSeq, from 1 (design §2.4): an epoch of that incarnation is at most
// Base + Index of its revision.
func Index(firstSeq, seq uint64) uint64 {
	zero := max(firstSeq, 1) - 1
	if seq <= zero {
		return 0
	}
	return seq - zero
}

// SetLeaseTTL makes ttl the TTL of the next acquisitions on the live
// bucket of stream: lease_ttl = ttl, and lease_ttl_max the largest of its
// old value, the old lease_ttl and ttl, so that the ceiling never goes
// down within an incarnation (docs/design.md §2.7). A tenure keeps
// the TTL it began with; the next one uses ttl. ttl is a whole number of
// milliseconds up to 24h (the store keeps milliseconds).
//
// Two changes of one bucket at once may lose one (a stream update is not a
// compare-and-swap): run one go-cluster init at a time.
func SetLeaseTTL(ctx context.Context, js jetstream.JetStream, stream string, ttl time.Duration) (Change, error) {
	if err := checkTTL(ttl); err != nil {
		return Change{}, err
	}
	return update(ctx, js, stream, func(_ *jetstream.StreamInfo, m Meta) (Meta, error) {
		m.MaxTTL = max(m.MaxTTL, m.LeaseTTL, ttl)
		m.LeaseTTL = ttl
		return m, nil
	})
}

// RaiseClusterMaxTTL raises the cluster's TTL ceiling, the lease_ttl_max
// of the members bucket of stream, to at least ttl: a re-create of the
// election's bucket does not lose it, and every tenure's TTL stays within
// it (docs/design.md §2.7). It never lowers it.
func RaiseClusterMaxTTL(ctx context.Context, js jetstream.JetStream, stream string, ttl time.Duration) (Change, error) {
	if err := checkTTL(ttl); err != nil {
		return Change{}, err
	}
	return update(ctx, js, stream, func(_ *jetstream.StreamInfo, m Meta) (Meta, error) {
		m.MaxTTL = max(m.MaxTTL, ttl)
		return m, nil
	})
}

// MarkProtocol marks the bucket of stream for protocol p
// (go-cluster.protocol), as init --upgrade does once the cluster's
// ceiling is where protocol p keeps it (docs/design.md §2.7).
func MarkProtocol(ctx context.Context, js jetstream.JetStream, stream string, p int) (Change, error) {
	return update(ctx, js, stream, func(_ *jetstream.StreamInfo, m Meta) (Meta, error) {
		m.Protocol = p
		return m, nil
	})
}

// Rebase gives the bucket of stream a new identity whose epoch base is
// above every epoch led in it so far (docs/design.md §5.8): its
// epoch_base becomes the server's time now in µs (the stream-info
// reply's), or the old epoch_base + 1 when that is larger; then it purges
// the lease key (a purge marker), so that a leader sees a revision not its
// own and ends its tenure (P9), which no Confirm of its would tell it.
// Followers see another incarnation at their next Confirm and start over;
// every record in the bucket is then below the base, unknown, and waited
// out for the ceiling. It is what to run after restoring an election
// bucket.
func Rebase(ctx context.Context, js jetstream.JetStream, stream string) (Change, error) {
	c, err := update(ctx, js, stream, func(info *jetstream.StreamInfo, m Meta) (Meta, error) {
		if info.TimeStamp.IsZero() {
			return m, fmt.Errorf("stream %q: the server's stream info carries no time (ts): cannot rebase", stream)
		}
		m.EpochBase = max(info.TimeStamp.UnixMicro(), m.EpochBase+1)
		return m, nil
	})
	if err != nil {
		return c, err
	}
	kv, err := js.KeyValue(ctx, strings.TrimPrefix(stream, "KV_"))
	if err == nil {
		err = kv.Purge(ctx, wire.LeaseKey)
	}
	if err != nil {
		return c, fmt.Errorf("stream %q rebased; the lease key not purged, a leader leads on until it renews no more: %w", stream, err)
	}
	return c, nil
}

// maxTTL is the longest TTL the metadata holds (Parse's bound).
const maxTTL = 24 * time.Hour

// checkTTL refuses a TTL the metadata cannot hold as it is.
func checkTTL(ttl time.Duration) error {
	if ttl < time.Millisecond || ttl > maxTTL || ttl%time.Millisecond != 0 {
		return fmt.Errorf("%w: %s %v is not a whole number of milliseconds in (0, 24h]", ErrInvalid, KeyLeaseTTL, ttl)
	}
	return nil
}

// update reads the stream's configuration, lets change compute the new
// metadata from the info and the metadata as they are, and writes the
// configuration back with it: nothing is written when nothing changes.
// Metadata that does not parse is not changed: its ceiling is unknown.
func update(ctx context.Context, js jetstream.JetStream, stream string, change func(*jetstream.StreamInfo, Meta) (Meta, error)) (Change, error) {
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return Change{}, fmt.Errorf("stream %q: %w", stream, err)
	}
	info := s.CachedInfo()
	before, err := Parse(info.Config.Metadata)
	if err != nil {
		return Change{}, fmt.Errorf("stream %q: %w", stream, err)
	}
	after, err := change(info, before)
	if err != nil {
		return Change{}, err
	}
	c := Change{Before: before, After: after, Created: info.Created, FirstSeq: info.Config.FirstSeq}
	if after == before {
		return c, nil
	}
	cfg := info.Config
	cfg.Metadata = after.Set(maps.Clone(cfg.Metadata))
	s, err = js.UpdateStream(ctx, cfg)
	if err != nil {
		return Change{}, fmt.Errorf("update stream %q: %w", stream, err)
	}
	if c.After, err = Parse(s.CachedInfo().Config.Metadata); err != nil {
		return Change{}, fmt.Errorf("stream %q after the update: %w", stream, err)
	}
	return c, nil
}
