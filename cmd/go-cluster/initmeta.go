package main

// init's changes of the election's metadata on a live bucket: --lease-ttl
// (docs/design.md §2.7), --rebase (§6.3) and --upgrade (§6.4); and
// the metadata as init reports it.

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ozanturksever/go-cluster/internal/bucketmeta"
	"github.com/ozanturksever/go-cluster/internal/store"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// electionMeta is what a bucket's metadata says of the election.
type electionMeta struct {
	// LeaseTTLMs is go-cluster.lease_ttl: the TTL of the next tenures;
	// 0 when absent.
	LeaseTTLMs int64 `json:"lease_ttl_ms"`
	// LeaseTTLMaxMs is go-cluster.lease_ttl_max, the ceiling: the longest
	// TTL a holder of this incarnation may use.
	LeaseTTLMaxMs int64 `json:"lease_ttl_max_ms"`
	// Protocol is go-cluster.protocol; 0 when unmarked.
	Protocol int `json:"protocol"`
	// EpochBase is the base every epoch of this incarnation is above:
	// the bucket's creation time in µs less one, or go-cluster.epoch_base
	// (set by --rebase) when larger.
	EpochBase int64 `json:"epoch_base"`
	// Rebased: EpochBase is go-cluster.epoch_base.
	Rebased bool `json:"rebased,omitempty"`
}

// metaOf is the report of metadata m of a bucket whose stream's first_seq
// is firstSeq.
func metaOf(m bucketmeta.Meta, firstSeq uint64) electionMeta {
	base := bucketmeta.Base(firstSeq, m.EpochBase)
	return electionMeta{LeaseTTLMs: m.LeaseTTL.Milliseconds(), LeaseTTLMaxMs: m.MaxTTL.Milliseconds(),
		Protocol: m.Protocol, EpochBase: base, Rebased: m.EpochBase != 0 && m.EpochBase == base}
}

// upgradeReport is what --upgrade found in the lease key, and did.
type upgradeReport struct {
	Found     string `json:"found"`               // what the key held
	Rewritten bool   `json:"rewritten"`           // false: left as it was
	Epoch     int64  `json:"epoch,omitempty"`     // of the released record written
	Revision  uint64 `json:"revision,omitempty"`  // of the released record written
	WaitedMs  int64  `json:"waited_ms,omitempty"` // --wait: an old holder's lease waited out
}

// checkMetaFlags checks --lease-ttl against the bounds of a Config's
// LeaseTTL (the metadata keeps milliseconds) and --wait's company.
func (c *initCmd) checkMetaFlags() error {
	if t := c.leaseTTL; t != 0 && (t < wire.MinLeaseTTL || t > wire.MaxLeaseTTL || t%time.Millisecond != 0) {
		return fmt.Errorf("%w: --lease-ttl %v must be between %v and %v, in whole milliseconds", errUsage, t, wire.MinLeaseTTL, wire.MaxLeaseTTL)
	}
	if c.wait && !c.upgrade {
		return fmt.Errorf("%w: --wait goes with --upgrade", errUsage)
	}
	return nil
}

// changeMeta makes the changes the flags ask for, rebase first (the
// upgrade's epoch is then in the new base's range), then the upgrade,
// then the TTL of an existing bucket (a new one was created with it). r
// gets Before when anything changed, and Upgrade.
func (c *initCmd) changeMeta(ctx context.Context, e *env, js jetstream.JetStream, opts store.Options, bucket string, r *initReport) error {
	stream := "KV_" + bucket
	var changes []bucketmeta.Change
	if c.rebase {
		ch, err := timed(ctx, e.opts.timeout, func(ctx context.Context) (bucketmeta.Change, error) { return bucketmeta.Rebase(ctx, js, stream) })
		if err != nil {
			return fmt.Errorf("rebase: %w", err)
		}
		changes = append(changes, ch)
	}
	if c.upgrade {
		// Not timed as a whole: --wait waits out the old holder's TTL.
		up, err := bucketmeta.Upgrade(ctx, js, stream, bucketmeta.UpgradeOptions{Key: wire.LeaseKey,
			LeaseTTL: cmp.Or(c.leaseTTL, wire.DefaultLeaseTTL), Wait: c.wait, RequestTimeout: e.opts.timeout})
		if err != nil {
			return fmt.Errorf("upgrade: %w", err)
		}
		changes = append(changes, up.Change)
		r.Upgrade = &upgradeReport{Found: up.Found, Rewritten: up.Rewritten, Epoch: up.Epoch, Revision: up.Revision, WaitedMs: up.Waited.Milliseconds()}
		mctx, cancel := context.WithTimeout(ctx, e.opts.timeout)
		ch, moved, err := moveCeiling(mctx, e, js, opts, bucket)
		cancel()
		if err != nil {
			return fmt.Errorf("upgrade: move the cluster's TTL ceiling to bucket %s: %w", wire.AccountBucketName, err)
		}
		changes = append(changes, ch)
		r.moved = moved
	}
	if c.leaseTTL != 0 && !r.Created {
		ch, err := timed(ctx, e.opts.timeout, func(ctx context.Context) (bucketmeta.Change, error) {
			return bucketmeta.SetLeaseTTL(ctx, js, stream, c.leaseTTL)
		})
		if err != nil {
			return fmt.Errorf("set the lease TTL: %w", err)
		}
		changes = append(changes, ch)
	}
	if len(changes) > 0 {
		first, last := changes[0], changes[len(changes)-1]
		if first.Before != last.After || !first.Created.Equal(last.Created) {
			before := metaOf(first.Before, first.FirstSeq)
			r.Before = &before
		}
	}
	return nil
}

// usableMeta reads the metadata of the bucket as a node of this version
// would: one it would refuse is an error, one it would run on without
// knowing its protocol a warning.
func usableMeta(bucket string, info *jetstream.StreamInfo) (electionMeta, []string, error) {
	m, err := bucketmeta.Parse(info.Config.Metadata)
	if err != nil {
		return electionMeta{}, nil, fmt.Errorf("bucket %q: %w", bucket, err)
	}
	switch {
	case m.Protocol != 0 && (m.Protocol < wire.Protocol || m.Protocol > wire.BucketProtocolHi(wire.ProtocolHi)):
		return electionMeta{}, nil, fmt.Errorf("bucket %q is marked for protocol %d; this go-cluster uses buckets of protocols %d to %d", bucket, m.Protocol, wire.Protocol, wire.BucketProtocolHi(wire.ProtocolHi))
	case m.LeaseTTL == 0:
		return electionMeta{}, nil, fmt.Errorf("bucket %q has no %s metadata, the cluster's LeaseTTL, which nodes of this version need: a bucket of protocol 1 is moved with go-cluster init --upgrade once every old node is stopped (docs/production.md), any other is given one with --lease-ttl",
			bucket, bucketmeta.KeyLeaseTTL)
	case m.Protocol == 0:
		return metaOf(m, info.Config.FirstSeq), []string{fmt.Sprintf("bucket %s is not marked with a protocol version: if nodes of protocol 1 used it, stop every one and run go-cluster init --upgrade", bucket)}, nil
	}
	return metaOf(m, info.Config.FirstSeq), nil, nil
}

// renderMeta prints what init changed of the metadata, and the metadata.
func renderMeta(e *env, r initReport) error {
	var lines []string
	now := r.Election
	if b := r.Before; b != nil {
		if line := ttlChange(*b, now); line != "" {
			lines = append(lines, line)
		}
		if b.EpochBase != now.EpochBase {
			lines = append(lines, fmt.Sprintf("rebased: epoch base %d, was %d: running nodes start over at their next check, and wait out every record in the bucket", now.EpochBase, b.EpochBase))
		}
		if b.Protocol != now.Protocol {
			lines = append(lines, fmt.Sprintf("marked for protocol %d, was %s", now.Protocol, protocolText(b.Protocol)))
		}
	}
	if u := r.Upgrade; u != nil {
		done := "left as it is"
		if u.Rewritten {
			done = fmt.Sprintf("rewrote it as a released record of protocol %d at epoch %d (revision %d)", wire.Protocol, u.Epoch, u.Revision)
		}
		if u.WaitedMs > 0 {
			done = fmt.Sprintf("waited %v for it to run out, then %s", ms(u.WaitedMs), done)
		}
		lines = append(lines, fmt.Sprintf("upgrade: the lease key held %s; %s", u.Found, done))
	}
	rebased := ""
	if now.Rebased {
		rebased = " (rebased)"
	}
	lines = append(lines, fmt.Sprintf("election: lease TTL %v, ceiling %v, protocol %s, epoch base %d%s",
		ms(now.LeaseTTLMs), ms(now.LeaseTTLMaxMs), protocolText(now.Protocol), now.EpochBase, rebased))
	for _, l := range lines {
		if _, err := fmt.Fprintln(e.stdout, l); err != nil {
			return err
		}
	}
	return nil
}

// ttlChange says how the TTL and its ceiling changed ("" if not).
func ttlChange(b, now electionMeta) string {
	var ceiling string
	switch {
	case b.LeaseTTLMs == now.LeaseTTLMs && b.LeaseTTLMaxMs == now.LeaseTTLMaxMs:
		return ""
	case b.LeaseTTLMaxMs == now.LeaseTTLMaxMs:
		ceiling = fmt.Sprintf("the ceiling stays %v", ms(now.LeaseTTLMaxMs))
	default:
		ceiling = fmt.Sprintf("the ceiling from %v to %v", ms(b.LeaseTTLMaxMs), ms(now.LeaseTTLMaxMs))
	}
	return fmt.Sprintf("changed the lease TTL from %v to %v, %s: a tenure running keeps its TTL, the next acquisitions use the new one",
		ms(b.LeaseTTLMs), ms(now.LeaseTTLMs), ceiling)
}

// ms is a number of milliseconds as a duration ("none" for 0).
func ms(n int64) string {
	if n == 0 {
		return "none"
	}
	return (time.Duration(n) * time.Millisecond).String()
}

// protocolText is a protocol version ("unmarked" for 0).
func protocolText(p int) string {
	if p == 0 {
		return "unmarked"
	}
	return fmt.Sprint(p)
}

// timed runs f under ctx bounded by d.
func timed[T any](ctx context.Context, d time.Duration, f func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return f(ctx)
}
