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

// keepCeiling raises the cluster's TTL ceiling to the largest of the
// election bucket's ceiling and TTL (r.Election) and the ceilings kept so
// far: in the members bucket when the bucket is marked protocol 3 or
// unmarked (created if absent, so that nodes allowed to write in it need
// not be allowed to create it), else in the account's bucket; and in a
// members bucket left beside a bucket marked 4 (one builds of protocol 3
// would read), with a warning that --upgrade deletes it. A failure is a
// warning: nodes set their ceiling at start, from their own TTL.
func (c *initCmd) keepCeiling(ctx context.Context, e *env, js jetstream.JetStream, opts store.Options, r *initReport) {
	ceiling := max(time.Duration(r.Election.LeaseTTLMaxMs), time.Duration(r.Election.LeaseTTLMs)) * time.Millisecond
	members := wire.MembersBucketName(e.opts.cluster)
	warn := func(bucket string, err error) {
		fmt.Fprintf(e.stderr, "warning: the cluster's TTL ceiling in bucket %s was not raised to %v (%v): if the election's bucket is created again, nodes may wait less than a leader of the old one still leads for (docs/design.md §2.7)\n",
			bucket, ceiling, err)
	}
	kept, hasMembers, err := membersCeiling(ctx, js, members)
	if err != nil {
		warn(members, err)
		return
	}
	ceiling = max(ceiling, kept)
	if r.Election.Protocol < wire.BucketProtocol {
		if account, err := js.KeyValue(ctx, wire.AccountBucketName); err == nil {
			kept, _ := store.Ceiling(ctx, account, e.opts.cluster) // none readable: 0
			ceiling = max(ceiling, kept)
		}
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
	if hasMembers {
		if _, err := bucketmeta.RaiseClusterMaxTTL(ctx, js, wire.KVStream(members), after); err != nil {
			warn(members, err)
		}
		fmt.Fprintf(e.stderr, "warning: the members bucket %s of protocol 3 is still there beside a bucket of protocol %d: nodes read its ceiling too; go-cluster init --upgrade moves it and deletes it\n",
			members, r.Election.Protocol)
	}
}

// membersCeiling is the ceiling in the members bucket of protocol 3
// bucket, and whether there is one: an error when it cannot be looked up
// or its metadata does not parse.
func membersCeiling(ctx context.Context, js jetstream.JetStream, bucket string) (time.Duration, bool, error) {
	s, err := js.Stream(ctx, wire.KVStream(bucket))
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		return 0, false, nil
	case err != nil:
		return 0, false, fmt.Errorf("the members bucket %s: %w", bucket, err)
	}
	meta, err := bucketmeta.Parse(s.CachedInfo().Config.Metadata)
	if err != nil {
		return 0, true, fmt.Errorf("the members bucket %s: %w", bucket, err)
	}
	return meta.MaxTTL, true, nil
}

// moveCeiling is --upgrade's move of a cluster of protocol 3, whose
// ceiling is in its members bucket: the ceiling in the account's bucket
// is raised to the largest of the members bucket's, the election bucket's
// ceiling and its TTL; then the bucket is marked 4, and the members
// bucket, which no node of this version then needs, is deleted. In that
// order, the ceiling a node of this version reads never goes down. A node
// of protocol 3 alone still running refuses the bucket at its next check
// (ErrProtocolVersion). A members bucket left beside a bucket marked 4
// already is folded in and deleted the same way.
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
	members := wire.MembersBucketName(e.opts.cluster)
	kept, hasMembers, err := membersCeiling(ctx, js, members)
	if err != nil {
		return bucketmeta.Change{}, moved, err
	}
	ch := bucketmeta.Change{Before: meta, After: meta}
	if meta.Protocol >= wire.BucketProtocol && !hasMembers {
		return ch, moved, nil // moved already
	}
	kv, created, err := store.EnsureAccount(ctx, js, opts)
	if err != nil {
		return bucketmeta.Change{}, moved, fmt.Errorf("the account's bucket %s: %w", wire.AccountBucketName, err)
	}
	moved.created = created
	if _, _, err := store.RaiseCeiling(ctx, kv, e.opts.cluster, max(meta.MaxTTL, meta.LeaseTTL, kept)); err != nil {
		return bucketmeta.Change{}, moved, err
	}
	if meta.Protocol < wire.BucketProtocol {
		if ch, err = bucketmeta.MarkProtocol(ctx, js, stream, wire.BucketProtocol); err != nil {
			return ch, moved, err
		}
	}
	if hasMembers {
		if err := js.DeleteStream(ctx, wire.KVStream(members)); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			return ch, moved, fmt.Errorf("the ceiling is moved and the bucket marked %d, but the members bucket %s was not deleted (run init --upgrade again): %w", wire.BucketProtocol, members, err)
		}
		moved.from = members
	}
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
