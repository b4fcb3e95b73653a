package main

// init: create the cluster's bucket ahead of time, with exactly the
// settings a node would create it with (store.Create), so that the
// first election is immediate once the bucket is older than LeaseTTL; and
// the cluster's TTL ceiling in the account's bucket (initceiling.go), so
// that nodes allowed to write in it need not be allowed to create it. On a bucket
// that exists, it changes the election's metadata (initmeta.go): the
// cluster's LeaseTTL, its epoch base after a restore, its protocol.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/pflag"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/bucketmeta"
	"github.com/ozanturksever/go-cluster/internal/store"
)

// initCmd creates the cluster's bucket. Its flags are "" or 0 when not
// given: only given ones are compared with an existing bucket.
type initCmd struct {
	replicas         int
	storage          string
	placementCluster string
	placementTags    string
	leaseTTL         time.Duration
	rebase           bool
	upgrade          bool
	wait             bool
}

func (c *initCmd) define(fs *pflag.FlagSet) {
	fs.IntVar(&c.replicas, "replicas", 0, "`N` replicas of the bucket, 1 to 5 (default 1; 3 on a JetStream cluster)")
	fs.StringVar(&c.storage, "storage", "", "`KIND` of storage: file or memory (default file)")
	fs.StringVar(&c.placementCluster, "placement-cluster", "", "place the bucket in the JetStream cluster `NAME`")
	fs.StringVar(&c.placementTags, "placement-tags", "", "place the bucket on servers with every one of `TAGS`, comma-separated")
	fs.DurationVar(&c.leaseTTL, "lease-ttl", 0, "the cluster's LeaseTTL `D`: a new bucket's (default 10s); on an existing bucket, the next tenures'")
	fs.BoolVar(&c.rebase, "rebase", false, "give the bucket an epoch base above every epoch led in it: after restoring it from a backup")
	fs.BoolVar(&c.upgrade, "upgrade", false, "move the bucket of a cluster whose old nodes are all stopped to this version's protocol")
	fs.BoolVar(&c.wait, "wait", false, "with --upgrade: wait out a lease an old node holds instead of refusing")
}

// options are the bucket options the flags ask for.
func (c *initCmd) options() (store.Options, error) {
	var o store.Options
	switch {
	case c.replicas == 0:
	case c.replicas < 1 || c.replicas > 5:
		return o, fmt.Errorf("%w: --replicas %d must be between 1 and 5", errUsage, c.replicas)
	default:
		o.Replicas = c.replicas
	}
	switch c.storage {
	case "", "file":
	case "memory":
		o.Storage = jetstream.MemoryStorage
	default:
		return o, fmt.Errorf("%w: --storage %q must be file or memory", errUsage, c.storage)
	}
	var tags []string
	if c.placementTags != "" {
		for _, tag := range strings.Split(c.placementTags, ",") {
			if tag = strings.TrimSpace(tag); tag == "" {
				return o, fmt.Errorf("%w: --placement-tags %q has an empty tag", errUsage, c.placementTags)
			}
			tags = append(tags, tag)
		}
	}
	if c.placementCluster != "" || tags != nil {
		o.Placement = &jetstream.Placement{Cluster: c.placementCluster, Tags: tags}
	}
	if err := c.checkMetaFlags(); err != nil {
		return o, err
	}
	o.LeaseTTL = c.leaseTTL
	return o, nil
}

// initReport is what init prints.
type initReport struct {
	Bucket    string               `json:"bucket"`
	Created   bool                 `json:"created"` // false: it existed
	Replicas  int                  `json:"replicas"`
	Storage   string               `json:"storage"`
	History   int64                `json:"history"`
	Placement *jetstream.Placement `json:"placement,omitempty"`
	Notes     []string             `json:"notes,omitempty"` // how an existing bucket differs from the flags
	// Election is what the bucket's metadata says, after init's changes.
	Election electionMeta `json:"election"`
	// Before is what it said before them; absent when init changed none.
	Before *electionMeta `json:"before,omitempty"`
	// Upgrade is what --upgrade found in the lease key, and did.
	Upgrade *upgradeReport `json:"upgrade,omitempty"`
	// Warnings are about the bucket's metadata (also on stderr).
	Warnings []string `json:"warnings,omitempty"`
	// Ceiling is where the cluster's TTL ceiling is kept, absent when it
	// could not be written (a warning says why: nodes create it, from
	// their own TTL).
	Ceiling *ceilingReport `json:"ceiling,omitempty"`
	// moved is what --upgrade did to move the ceiling.
	moved movedCeiling
	// FirstElection is, for a bucket this init created, the earliest
	// time its first election can happen: its creation plus its TTL
	// ceiling (docs/design.md P6). A node started before waits until then.
	FirstElection *time.Time `json:"first_election,omitempty"`
}

func (c *initCmd) run(ctx context.Context, e *env, _ []string) error {
	opts, err := c.options()
	if err != nil {
		return err
	}
	done := e.waiting("creating the bucket of cluster " + e.opts.cluster)
	defer done()
	nc, err := e.connect()
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := e.jetStream(nc)
	if err != nil {
		return fmt.Errorf("%w: %v", errNoJetStream, err)
	}
	cctx, cancel := context.WithTimeout(ctx, e.opts.timeout)
	kv, created, err := store.Create(cctx, js, e.opts.cluster, opts)
	cancel()
	if err != nil {
		return explainInit("create the bucket", err, nc, e)
	}
	r := initReport{Created: created}
	if err := c.changeMeta(ctx, e, js, opts, kv.Bucket(), &r); err != nil {
		return explainInit("change the bucket's metadata", err, nc, e)
	}
	ctx, cancel = context.WithTimeout(ctx, e.opts.timeout)
	defer cancel()
	status, err := kv.Status(ctx)
	if err != nil {
		return explainInit("read the bucket", err, nc, e)
	}
	r.Bucket, r.History = status.Bucket(), status.History()
	if bs, ok := status.(*jetstream.KeyValueBucketStatus); ok {
		info := bs.StreamInfo()
		r.Replicas, r.Storage, r.Placement = info.Config.Replicas, storageName(info.Config.Storage), info.Config.Placement
		if r.Election, r.Warnings, err = usableMeta(r.Bucket, info); err != nil {
			return fmt.Errorf("the bucket exists with settings the election cannot use: %w", err)
		}
		if created {
			at := info.Created.Add(time.Duration(r.Election.LeaseTTLMaxMs) * time.Millisecond)
			r.FirstElection = &at
		}
	}
	if !created {
		r.Notes = c.differences(r)
	}
	for _, w := range r.Warnings {
		defer fmt.Fprintf(e.stderr, "warning: %s\n", w)
	}
	c.keepCeiling(ctx, e, js, opts, &r)
	done()
	if e.opts.json {
		return writeJSON(e.stdout, r)
	}
	return renderInit(e, r)
}

// differences says how an existing bucket differs from what the given
// flags ask for: it is used as it is all the same.
func (c *initCmd) differences(r initReport) []string {
	var notes []string
	if c.replicas != 0 && c.replicas != r.Replicas {
		notes = append(notes, fmt.Sprintf("it has %d replicas, not the %d asked for", r.Replicas, c.replicas))
	}
	if c.storage != "" && c.storage != r.Storage {
		notes = append(notes, fmt.Sprintf("it is in %s storage, not %s", r.Storage, c.storage))
	}
	if c.placementCluster != "" || c.placementTags != "" {
		var have string
		if r.Placement != nil {
			have = placementText(r.Placement)
		}
		opts, _ := c.options()
		if want := placementText(opts.Placement); want != have {
			notes = append(notes, fmt.Sprintf("it is placed %q, not %q", have, want))
		}
	}
	return notes
}

// storageName is a storage type as --storage gives it.
func storageName(st jetstream.StorageType) string {
	if st == jetstream.MemoryStorage {
		return "memory"
	}
	return "file"
}

// placementText is a placement as the flags would give it.
func placementText(p *jetstream.Placement) string {
	var parts []string
	if p.Cluster != "" {
		parts = append(parts, "cluster "+p.Cluster)
	}
	if len(p.Tags) > 0 {
		parts = append(parts, "tags "+strings.Join(p.Tags, ","))
	}
	return strings.Join(parts, ", ")
}

// renderInit prints the report as text.
func renderInit(e *env, r initReport) error {
	verb := "created bucket " + r.Bucket
	if !r.Created {
		verb = "bucket " + r.Bucket + " exists and is usable"
	}
	where := ""
	if r.Placement != nil {
		where = ", placed in " + placementText(r.Placement)
	}
	if _, err := fmt.Fprintf(e.stdout, "%s: %d replicas, %s storage, history %d%s\n", verb, r.Replicas, r.Storage, r.History, where); err != nil {
		return err
	}
	for _, n := range r.Notes {
		if _, err := fmt.Fprintf(e.stdout, "note: %s; an existing bucket is used as it is\n", n); err != nil {
			return err
		}
	}
	if err := renderMeta(e, r); err != nil {
		return err
	}
	if r.FirstElection != nil {
		// Honest about P6: a new bucket cannot be told from one deleted
		// moments ago under a cut-off leader, so its first election waits.
		if _, err := fmt.Fprintf(e.stdout, "first election: not before %s (%v, the bucket's TTL ceiling, after its creation: docs/design.md P6); a node started later leads at once\n",
			r.FirstElection.UTC().Format(time.RFC3339Nano), ms(r.Election.LeaseTTLMaxMs)); err != nil {
			return err
		}
	}
	return renderCeiling(e, r.Ceiling)
}

// explainInit turns an error of what init was doing (store.Create, a
// change of the metadata) into one of the CLI's.
func explainInit(doing string, err error, nc *nats.Conn, e *env) error {
	switch {
	case errors.Is(err, cluster.ErrBucketConfig), errors.Is(err, bucketmeta.ErrInvalid):
		return fmt.Errorf("the bucket exists with settings the election cannot use: %w", err)
	case errors.Is(err, bucketmeta.ErrLeaseHeld), errors.Is(err, bucketmeta.ErrLeaseChanged):
		return fmt.Errorf("upgrade refused: %w", err)
	case errors.Is(err, jetstream.ErrJetStreamNotEnabled), errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount):
		return fmt.Errorf("%w on %s: %v", errNoJetStream, nc.ConnectedUrlRedacted(), err)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout), errors.Is(err, nats.ErrNoResponders):
		return fmt.Errorf("%w: JetStream did not answer within %v (%s): %v", errNoAnswer, e.opts.timeout, doing, err)
	default:
		return fmt.Errorf("%s: %w", doing, err)
	}
}
