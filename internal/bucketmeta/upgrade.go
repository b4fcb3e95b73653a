package bucketmeta

// go-cluster init --upgrade: move a bucket whose nodes are all stopped to
// this protocol (docs/design.md §5.9).

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ozanturksever/go-cluster/internal/wire"
)

// ErrLeaseHeld says the lease key holds a record of another protocol that
// names a holder whose expires_at is still ahead of the server's time: a
// node of the old version may still lead. Nothing was changed.
var ErrLeaseHeld = errors.New("the lease is held by a node of another protocol version")

// ErrLeaseChanged says the lease key, or the bucket, changed between
// Upgrade's reading and its write: another writer, such as a node of the
// old version still running. The metadata may be marked; the key was not
// rewritten. Stop every old node and run it again.
var ErrLeaseChanged = errors.New("the lease key changed during the upgrade")

// UpgradeOptions say how to upgrade.
type UpgradeOptions struct {
	// Key is the lease key (wire.LeaseKey).
	Key string
	// LeaseTTL is the cluster's TTL, written when the bucket has none; a
	// TTL already there is kept (SetLeaseTTL changes it).
	LeaseTTL time.Duration
	// Wait, instead of refusing a held record of another protocol
	// (ErrLeaseHeld), waits until it has stayed unchanged for its ttl_ms
	// (LeaseTTL for a record that does not say) on this machine's clock,
	// as a follower would, and then replaces it with a compare-and-swap
	// on its revision: a record that changed meanwhile is ErrLeaseChanged.
	Wait bool
	// RequestTimeout bounds each request to the server; 0 leaves that to
	// ctx. With Wait, ctx bounds the wait as well.
	RequestTimeout time.Duration
}

// Upgraded is what Upgrade found and did.
type Upgraded struct {
	Change
	// Found says what the lease key held, for people.
	Found string
	// Rewritten: the key now holds a released record of this protocol
	// at Epoch, revision Revision. false: it held one of this protocol
	// already, or the bucket was already marked and the key held no
	// record of another protocol; it was left as it was.
	Rewritten bool
	Epoch     int64
	Revision  uint64
	// Waited is how long a held record was waited out (UpgradeOptions.Wait).
	Waited time.Duration
}

// Upgrade moves the bucket of stream, whose nodes must all be stopped, to
// this protocol (docs/design.md §5.9): it marks the metadata with
// go-cluster.protocol, writes lease_ttl and lease_ttl_max from o.LeaseTTL
// where the bucket has no TTL, and rewrites the lease key as a released
// record of this protocol, so that the first new node leads at once:
//
//   - over a value at revision r (a record of another protocol, garbage,
//     a delete or purge marker): at the jump epoch base + Index(r) + 1,
//     with a compare-and-swap on r;
//   - into an absent key, the stream's last sequence being L: at
//     base + Index(L) + 1, with a create checked by
//     Nats-Expected-Last-Sequence L;
//
// where base is max(first_seq − 1, epoch_base). A bucket moved from
// another protocol gets an epoch_base at the server's time now in µs, or
// at a record of another protocol's epoch if larger, so that epochs still
// grow across the move (applications fence with them): the old protocols
// numbered epochs from the creation time in µs.
//
// A key holding a record of this protocol is left as it is, and so is
// the key of a bucket already marked with this protocol that holds no
// record of another: the election itself waits those out; a release
// written there would skip the wait that covers a holder of an earlier
// incarnation.
//
// A record of another protocol naming a holder whose expires_at is ahead
// of the server's time is refused with ErrLeaseHeld, nothing changed,
// unless o.Wait. That check compares the old holder's clock with the
// server's: it catches an old node left running, it does not replace
// stopping them. A key that changes before the write is ErrLeaseChanged.
// Running Upgrade again after either is safe. A bucket marked for a newer
// protocol is refused with wire.ErrProtocolVersion.
func Upgrade(ctx context.Context, js jetstream.JetStream, stream string, o UpgradeOptions) (Upgraded, error) {
	bucket, ok := strings.CutPrefix(stream, "KV_")
	if !ok || bucket == "" || o.Key == "" {
		return Upgraded{}, fmt.Errorf("upgrade: stream %q is not a KV bucket's, or no key given", stream)
	}
	if err := checkTTL(o.LeaseTTL); err != nil {
		return Upgraded{}, err
	}
	plan, err := readPlan(ctx, js, stream, o)
	if err != nil {
		return Upgraded{}, err
	}
	var up Upgraded
	up.Found = plan.found
	if plan.heldFor > 0 {
		if !o.Wait {
			return Upgraded{}, fmt.Errorf("%w: the lease key holds %s, which expires at %s, %v after the server's time: stop every node of the old version first (and run init --upgrade again once it has expired), or pass --wait to wait its ttl out",
				ErrLeaseHeld, plan.found, plan.expires.Format(time.RFC3339), plan.heldFor.Round(time.Millisecond))
		}
		if up.Waited, err = waitOut(ctx, plan.ttl); err != nil {
			return Upgraded{}, err
		}
	}
	if up.Change, err = withTimeout(ctx, o.RequestTimeout, func(ctx context.Context) (Change, error) {
		return update(ctx, js, stream, func(info *jetstream.StreamInfo, m Meta) (Meta, error) {
			return plan.mark(m, o.LeaseTTL), nil
		})
	}); err != nil {
		return Upgraded{}, err
	}
	if !plan.rewrite {
		return up, nil
	}
	up.Epoch = plan.epoch(up.Base())
	up.Revision, err = withTimeout(ctx, o.RequestTimeout, func(ctx context.Context) (uint64, error) {
		return plan.write(ctx, js, leaseSubject(js, bucket, o.Key), wire.ReleasedRecord(wire.Protocol, up.Epoch, plan.now, plan.now, ""))
	})
	if err != nil {
		return Upgraded{}, err
	}
	up.Rewritten = true
	return up, nil
}

// plan is what Upgrade read of the bucket, and what it will write.
type plan struct {
	found   string
	rewrite bool
	rev     uint64 // the value's revision; 0: the key was absent
	lastSeq uint64 // the stream's last sequence, for a create
	// oldEpoch is the epoch of a record of another protocol (0: none).
	oldEpoch int64
	firstSeq uint64    // the stream's first_seq
	now      time.Time // the server's time
	// heldFor > 0: a record of another protocol names a holder, whose
	// expires_at is heldFor after the server's time; ttl is its ttl_ms.
	heldFor time.Duration
	expires time.Time
	ttl     time.Duration
}

// readPlan reads the stream's info, then the key's last value.
func readPlan(ctx context.Context, js jetstream.JetStream, stream string, o UpgradeOptions) (plan, error) {
	return withTimeout(ctx, o.RequestTimeout, func(ctx context.Context) (plan, error) {
		s, err := js.Stream(ctx, stream)
		if err != nil {
			return plan{}, fmt.Errorf("stream %q: %w", stream, err)
		}
		info := s.CachedInfo()
		meta, err := Parse(info.Config.Metadata)
		if err != nil {
			return plan{}, fmt.Errorf("stream %q: %w", stream, err)
		}
		if meta.Protocol > wire.BucketProtocol {
			return plan{}, fmt.Errorf("%w: stream %q is marked for protocol %d, newer than this version's %d: not moved back",
				wire.ErrProtocolVersion, stream, meta.Protocol, wire.BucketProtocol)
		}
		p := plan{lastSeq: info.State.LastSeq, firstSeq: info.Config.FirstSeq, now: info.TimeStamp}
		if p.now.IsZero() {
			p.now = time.Now() // a server that does not say its time: only the record's timestamps use it
		}
		msg, err := s.GetLastMsgForSubject(ctx, "$KV."+strings.TrimPrefix(stream, "KV_")+"."+o.Key)
		switch {
		case errors.Is(err, jetstream.ErrMsgNotFound):
			p.found = fmt.Sprintf("nothing (absent at sequence %d)", p.lastSeq)
			p.rewrite = !current(meta.Protocol)
			return p, nil
		case err != nil:
			return plan{}, fmt.Errorf("read the lease key of stream %q: %w", stream, err)
		}
		p.rev = msg.Sequence
		p.judge(msg, meta, o.LeaseTTL)
		return p, nil
	})
}

// judge decides what to do with the key's value.
func (p *plan) judge(msg *jetstream.RawStreamMsg, meta Meta, ttl time.Duration) {
	l, err := wire.DecodeLease(msg.Data, msg.Sequence)
	switch {
	case err != nil:
		p.found = fmt.Sprintf("no lease record at revision %d (%v)", p.rev, describeValue(msg, err))
		p.rewrite = !current(meta.Protocol)
	case l.Version == wire.Protocol:
		p.found = fmt.Sprintf("a record of protocol %d at revision %d (epoch %d)", l.Version, p.rev, l.Epoch)
	default:
		version := max(l.Version, 1)
		p.rewrite = true
		if l.Epoch <= maxCarriedEpoch {
			p.oldEpoch = l.Epoch
		}
		if l.NodeID == "" {
			p.found = fmt.Sprintf("a released record of protocol %d at revision %d (epoch %d)", version, p.rev, l.Epoch)
			return
		}
		p.found = fmt.Sprintf("a record of protocol %d held by %s at revision %d (epoch %d)", version, l.NodeID, p.rev, l.Epoch)
		if ahead := l.ExpiresAt.Sub(p.now); ahead > 0 {
			p.heldFor, p.expires = ahead, l.ExpiresAt
			p.ttl = time.Duration(l.TTLMillis) * time.Millisecond // the holder's own TTL, which its tenure kept
			if p.ttl == 0 {
				p.ttl = ttl // a record that does not say: the cluster's
			}
		}
	}
}

// current says a bucket's mark is of this version's election, whose
// records are of wire.Protocol: 3, or wire.BucketProtocol, which only
// moves the cluster's ceiling elsewhere (docs/design.md §2.7).
func current(mark int) bool { return mark >= wire.Protocol && mark <= wire.BucketProtocol }

// maxCarriedEpoch is the largest old epoch the new ones are raised above:
// a larger one (real ones are µs since 1970) is forged, and treated as
// an epoch out of range, as the election treats it (P1).
const maxCarriedEpoch = math.MaxInt64 / 2

// describeValue says why a value is no record: a marker, or what
// DecodeLease said.
func describeValue(msg *jetstream.RawStreamMsg, err error) string {
	if op := msg.Header.Get("KV-Operation"); op != "" {
		return strings.ToLower(op) + " marker"
	}
	return err.Error()
}

// mark is the metadata after the upgrade: this protocol, the TTL where
// there was none, and, for a bucket of another protocol, an epoch base at
// the server's time now in µs (above every epoch an older protocol led:
// they count from the creation time in µs, one more per write at most) or
// at an old record's epoch where that is larger.
func (p plan) mark(m Meta, ttl time.Duration) Meta {
	if !current(m.Protocol) {
		m.EpochBase = max(m.EpochBase, p.now.UnixMicro(), p.oldEpoch)
		m.Protocol = wire.Protocol
	}
	if m.LeaseTTL == 0 {
		m.LeaseTTL = ttl
	}
	m.MaxTTL = max(m.MaxTTL, m.LeaseTTL)
	return m
}

// epoch is the jump epoch over the key as read, in an incarnation above
// base: base + Index(rev) + 1, or base + Index(L) + 1 for an absent key.
func (p plan) epoch(base int64) int64 {
	seq := p.rev
	if seq == 0 {
		seq = p.lastSeq
	}
	return base + int64(Index(p.firstSeq, seq)) + 1
}

// write stores data over the value read (a CAS on its revision) or into
// the absent key (a create checked against the stream's last sequence).
func (p plan) write(ctx context.Context, js jetstream.JetStream, subject string, data []byte) (uint64, error) {
	msg := &nats.Msg{Subject: subject, Data: data, Header: nats.Header{}}
	msg.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(p.rev, 10))
	if p.rev == 0 {
		msg.Header.Set(jetstream.ExpectedLastSeqHeader, strconv.FormatUint(p.lastSeq, 10))
	}
	ack, err := js.PublishMsg(ctx, msg)
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant) {
		return 0, fmt.Errorf("%w: it held %s when read: %w", ErrLeaseChanged, p.found, err)
	}
	if err != nil {
		return 0, fmt.Errorf("write the lease key: %w", err)
	}
	return ack.Sequence, nil
}

// leaseSubject is where a message for the key is published: behind a
// JetStream domain or API prefix, under the API's prefix, as nats.go's KV
// puts (the server maps "<prefix>$KV.>" back to "$KV.>").
func leaseSubject(js jetstream.JetStream, bucket, key string) string {
	subject := "$KV." + bucket + "." + key
	var pre string
	switch o := js.Options(); {
	case o.Domain != "":
		pre = "$JS." + o.Domain + ".API."
	case o.APIPrefix != "":
		pre = strings.TrimSuffix(o.APIPrefix, ".") + "."
	}
	if pre == "" || pre == jetstream.DefaultAPIPrefix {
		return subject
	}
	return pre + subject
}

// waitOut waits d on this machine's clock, or until ctx ends.
func waitOut(ctx context.Context, d time.Duration) (time.Duration, error) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return d, nil
	case <-ctx.Done():
		return 0, fmt.Errorf("waiting %v for the old holder's lease to run out: %w", d, context.Cause(ctx))
	}
}

// withTimeout runs f under ctx bounded by d (0: by ctx alone).
func withTimeout[T any](ctx context.Context, d time.Duration, f func(context.Context) (T, error)) (T, error) {
	if d <= 0 {
		return f(ctx)
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return f(ctx)
}
