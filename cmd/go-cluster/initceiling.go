package main

// init and the cluster's TTL ceiling, which a re-create of the election's
// bucket does not lose (docs/design.md §2.7): kept in the account's bucket
// (go-cluster, key ceiling.<ID>) for a bucket marked protocol 4, in the
// members bucket's metadata for one marked 3; and --upgrade's move of a
// cluster from the second to the first.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ozanturksever/go-cluster/internal/bucketmeta"
	"github.com/ozanturksever/go-cluster/internal/store"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// ceilingReport is where init kept the cluster's TTL ceiling.
type ceilingReport struct {
	// Bucket is the bucket that keeps it: go-cluster, or the members
	// bucket of a cluster of protocol 3.
	Bucket string `json:"bucket"`
	// Created: init created that bucket.
	Created bool `json:"created,omitempty"`
	// CeilingMs is the ceiling after init, in ms.
	CeilingMs int64 `json:"ceiling_ms"`
	// Moved is the members bucket --upgrade moved the ceiling from, and
	// then deleted.
	Moved string `json:"moved_from,omitempty"`
}

// keepCeiling raises the cluster's TTL ceiling to the election bucket's
// ceiling and TTL (r.Election): in the members bucket when the bucket is
// marked protocol 3 (created if absent, so that nodes allowed to write in
// it need not be allowed to create it), else in the account's bucket; and
// in a members bucket that still exists beside a bucket marked 4 (one
// protocol-3 builds would read, were the bucket made again). A failure is
// a warning: nodes create their ceiling at start, from their own TTL.
func (c *initCmd) keepCeiling(ctx context.Context, e *env, js jetstream.JetStream, opts store.Options, r *initReport) {
	ceiling := max(time.Duration(r.Election.LeaseTTLMaxMs), time.Duration(r.Election.LeaseTTLMs)) * time.Millisecond
	members := wire.MembersBucketName(e.opts.cluster)
	warn := func(bucket string, err error) {
		fmt.Fprintf(e.stderr, "warning: the cluster's TTL ceiling in bucket %s was not raised to %v (%v): if the election's bucket is created again, nodes may wait less than a leader of the old one still leads for (docs/design.md §2.7)\n",
			bucket, ceiling, err)
	}
	if r.Election.Protocol != 0 && r.Election.Protocol < wire.BucketProtocol {
		_, created, err := store.CreateMembers(ctx, js, e.opts.cluster, opts)
		if err == nil {
			_, err = bucketmeta.RaiseClusterMaxTTL(ctx, js, wire.KVStream(members), ceiling)
		}
		if err != nil {
			warn(members, err)
			return
		}
		r.Ceiling = &ceilingReport{Bucket: members, Created: created, CeilingMs: ceiling.Milliseconds()}
		return
	}
	kv, created, err := store.EnsureAccount(ctx, js, opts)
	var after time.Duration
	if err == nil {
		_, after, err = store.RaiseCeiling(ctx, kv, e.opts.cluster, ceiling)
	}
	if err != nil {
		warn(wire.AccountBucketName, err)
		return
	}
	r.Ceiling = &ceilingReport{Bucket: wire.AccountBucketName, Created: created || r.moved.created, CeilingMs: after.Milliseconds(), Moved: r.moved.from}
	if st, err := kv.Status(ctx); err == nil && opts.Replicas > 0 {
		if bs, ok := st.(*jetstream.KeyValueBucketStatus); ok && bs.StreamInfo().Config.Replicas < opts.Replicas {
			fmt.Fprintf(e.stderr, "warning: bucket %s has %d replicas, fewer than the %d asked for: every cluster of the account reads its ceiling there, and none takes over while it has no leader (docs/production.md)\n",
				wire.AccountBucketName, bs.StreamInfo().Config.Replicas, opts.Replicas)
		}
	}
	if _, err := js.KeyValue(ctx, members); err == nil {
		if _, err := bucketmeta.RaiseClusterMaxTTL(ctx, js, wire.KVStream(members), ceiling); err != nil {
			warn(members, err)
		}
	}
}

// moveCeiling is --upgrade on a bucket marked protocol 3: the cluster's
// ceiling moves from its members bucket into the account's bucket, raised
// to the largest of the members bucket's, the election bucket's ceiling
// and its TTL; then the bucket is marked 4, and the members bucket, which
// no node of this version then reads, is deleted. In that order, the
// ceiling any node reads never goes down. A node of protocol 3 alone still
// running refuses the bucket at its next check (ErrProtocolVersion).
func moveCeiling(ctx context.Context, e *env, js jetstream.JetStream, opts store.Options, bucket string) (bucketmeta.Change, movedCeiling, error) {
	var moved movedCeiling
	stream := wire.KVStream(bucket)
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return bucketmeta.Change{}, moved, fmt.Errorf("stream %q: %w", stream, err)
	}
	meta, err := bucketmeta.Parse(s.CachedInfo().Config.Metadata)
	if err != nil {
		return bucketmeta.Change{}, moved, fmt.Errorf("stream %q: %w", stream, err)
	}
	if meta.Protocol >= wire.BucketProtocol {
		return bucketmeta.Change{Before: meta, After: meta}, moved, nil // moved already
	}
	ceiling := max(meta.MaxTTL, meta.LeaseTTL)
	members := wire.MembersBucketName(e.opts.cluster)
	ms, err := js.Stream(ctx, wire.KVStream(members))
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		members = ""
	case err != nil:
		return bucketmeta.Change{}, moved, fmt.Errorf("the members bucket %s: %w", members, err)
	default:
		old, _ := bucketmeta.Parse(ms.CachedInfo().Config.Metadata)
		ceiling = max(ceiling, old.MaxTTL)
	}
	kv, created, err := store.EnsureAccount(ctx, js, opts)
	if err != nil {
		return bucketmeta.Change{}, moved, fmt.Errorf("the account's bucket %s: %w", wire.AccountBucketName, err)
	}
	moved.created = created
	if _, _, err := store.RaiseCeiling(ctx, kv, e.opts.cluster, ceiling); err != nil {
		return bucketmeta.Change{}, moved, err
	}
	ch, err := bucketmeta.MarkProtocol(ctx, js, stream, wire.BucketProtocol)
	if err != nil {
		return ch, moved, err
	}
	if members != "" {
		if err := js.DeleteStream(ctx, wire.KVStream(members)); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			return ch, moved, fmt.Errorf("the ceiling is moved and the bucket marked %d, but the members bucket %s was not deleted (delete it when no node of protocol 3 alone runs): %w", wire.BucketProtocol, members, err)
		}
	}
	moved.from = members
	return ch, moved, nil
}

// movedCeiling is what moveCeiling did besides the mark.
type movedCeiling struct {
	from    string // the members bucket it deleted ("": there was none)
	created bool   // it created the account's bucket
}

// renderCeiling prints where init kept the cluster's ceiling.
func renderCeiling(e *env, c *ceilingReport) error {
	if c == nil {
		return nil
	}
	verb := "kept"
	if c.Created {
		verb = "created bucket " + c.Bucket + " and kept"
	}
	line := fmt.Sprintf("%s the cluster's TTL ceiling, %v, in bucket %s", verb, ms(c.CeilingMs), c.Bucket)
	if c.Moved != "" {
		line += fmt.Sprintf("; moved it from the members bucket %s, deleted", c.Moved)
	}
	_, err := fmt.Fprintln(e.stdout, line)
	return err
}
