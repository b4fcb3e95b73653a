package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// init, built and run as a process, creates the bucket a node would
// create, with the cluster's LeaseTTL in its metadata, accepts it again,
// refuses one the election cannot use, and makes the first election
// immediate once the bucket is older than its LeaseTTL.
func TestCLIInit(t *testing.T) {
	// Runs alone: a node must lead within LeaseTTL-1s of its start, which other tests' load would stretch.
	natstest.CheckLeaks(t)
	bin := buildCLI(t)
	srv := natstest.RunServer(t)
	js, err := jetstream.New(srv.Connect(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cli := func(args ...string) result {
		t.Helper()
		return runCLI(t, bin, nil, append([]string{"-s", srv.URL()}, args...)...)
	}

	r := cli("init", "--cluster", "pre", "--lease-ttl", "5s")
	born := bucketCreated(ctx, t, js, "pre")
	want := fmt.Sprintf("created bucket cluster-pre: 1 replicas, file storage, history 8\n"+
		"election: lease TTL 5s, ceiling 5s, protocol %d, epoch base %d\n"+
		"first election: not before %s (5s, the bucket's TTL ceiling, after its creation: docs/design.md P6); a node started later leads at once\n"+
		"created bucket go-cluster and kept the cluster's TTL ceiling, 5s, in bucket go-cluster\n", wire.BucketProtocol, bucketFirstSeq(ctx, t, js, "pre")-1, born.Add(5*time.Second).UTC().Format(time.RFC3339Nano))
	if r.code != 0 || r.stdout != want {
		t.Fatalf("init: exit %d, %q %q; want %q", r.code, r.stdout, r.stderr, want)
	}
	created := time.Now()
	r = cli("init", "--cluster", "pre", "--replicas", "3", "--json")
	var rep initReport
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &rep) != nil {
		t.Fatalf("init again: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if rep.Created || rep.Replicas != 1 || len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], "1 replicas, not the 3") ||
		rep.Ceiling == nil || *rep.Ceiling != (ceilingReport{Bucket: wire.AccountBucketName, CeilingMs: 5000}) || rep.Before != nil || rep.Upgrade != nil ||
		rep.Election != (electionMeta{LeaseTTLMs: 5000, LeaseTTLMaxMs: 5000, Protocol: wire.BucketProtocol, EpochBase: int64(bucketFirstSeq(ctx, t, js, "pre")) - 1}) {
		t.Errorf("init of an existing bucket: %+v", rep)
	}

	t.Run("the node's settings", func(t *testing.T) {
		// A node creates its bucket with the same configuration as init.
		startMember(t, srv, "bynode", "n") // LeaseTTL 3s
		r := cli("init", "--cluster", "byinit", "--storage", "memory", "--lease-ttl", "3s")
		if r.code != 0 {
			t.Fatalf("init: exit %d, %q", r.code, r.stderr)
		}
		node, initd := streamConfig(ctx, t, js, wire.BucketName("bynode")), streamConfig(ctx, t, js, wire.BucketName("byinit"))
		if initd.Storage != jetstream.MemoryStorage {
			t.Errorf("init --storage memory made %v", initd.Storage)
		}
		initd.Storage = node.Storage
		if !reflect.DeepEqual(node, initd) {
			t.Errorf("the node's bucket %+v\ninit's bucket %+v", node, initd)
		}
		// Both keep the cluster's ceiling in the account's bucket, and
		// neither makes a members bucket: one stream a cluster.
		account, err := js.KeyValue(ctx, wire.AccountBucketName)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"bynode", "byinit"} {
			if e, err := account.Get(ctx, wire.CeilingKey(id)); err != nil || string(e.Value()) != "3000" {
				t.Errorf("the ceiling of cluster %s in bucket %s: %v %v, want 3000 (ms)", id, wire.AccountBucketName, e, err)
			}
			if _, err := js.Stream(ctx, wire.KVStream(wire.MembersBucketName(id))); !errors.Is(err, jetstream.ErrStreamNotFound) {
				t.Errorf("cluster %s has a members bucket (%v): a cluster costs one stream", id, err)
			}
		}
	})

	t.Run("refusals", func(t *testing.T) {
		if _, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: wire.BucketName("aging"), TTL: time.Hour}); err != nil {
			t.Fatal(err)
		}
		r := cli("init", "--cluster", "aging")
		if r.code != 1 || !strings.Contains(r.stderr, "settings the election cannot use") || !strings.Contains(r.stderr, "TTL") {
			t.Errorf("init over a bucket with a TTL: exit %d, %q", r.code, r.stderr)
		}
		for _, args := range [][]string{
			{"--storage", "disk"}, {"--replicas", "6"}, {"--placement-tags", "a,,b"},
		} {
			if r := cli(append([]string{"init", "--cluster", "bad"}, args...)...); r.code != 2 {
				t.Errorf("init %v: exit %d, %q", args, r.code, r.stderr)
			}
		}
	})

	t.Run("the first election is immediate", func(t *testing.T) {
		// With LeaseTTL 5s a node on a brand-new bucket waits 5s before
		// it may lead (P6 in docs/design.md). Once the bucket init made is older
		// than that, a node leads at once, while one started beside it on
		// a bucket created now still waits.
		const ttl = 5 * time.Second
		natstest.WaitFor(t, 3*ttl, func() bool { return bucketAge(ctx, t, js, "pre") > ttl }, "the bucket never got older than %v", ttl)
		if r := cli("init", "--cluster", "cold", "--lease-ttl", "5s"); r.code != 0 {
			t.Fatalf("init cold: exit %d, %q", r.code, r.stderr)
		}
		long := func(c *cluster.Config) { c.LeaseTTL, c.RenewInterval = ttl, time.Second }
		start := time.Now()
		cold := startMember(t, srv, "cold", "c", long)
		pre := startMember(t, srv, "pre", "p", long)
		natstest.WaitFor(t, ttl-time.Second, pre.node.IsLeader, "the node on the bucket made %v before did not lead within %v", time.Since(created).Round(time.Second), ttl-time.Second)
		if cold.node.IsLeader() {
			t.Errorf("the node on a new bucket led %v after its start, before its LeaseTTL %v", time.Since(start), ttl)
		}
		// Absent at L = first_seq - 1: base + 0 + 1, the first sequence, its
		// creation in µs.
		if e, want := pre.node.Epoch(), int64(bucketFirstSeq(ctx, t, js, "pre")); e != want {
			t.Errorf("first leader's epoch %d, want the bucket's first, %d (its first_seq: its creation in µs)", e, want)
		}
	})
}

// streamConfig is the configuration of a bucket, without what names it
// and its first_seq, its creator's clock.
func streamConfig(ctx context.Context, t *testing.T, js jetstream.JetStream, bucket string) jetstream.StreamConfig {
	t.Helper()
	s, err := js.Stream(ctx, "KV_"+bucket)
	if err != nil {
		t.Fatal(err)
	}
	cfg := s.CachedInfo().Config
	cfg.Name, cfg.Subjects, cfg.FirstSeq = "", nil, 0
	return cfg
}

// bucketAge is how old the bucket of cluster id is on the server's clock.
// bucketFirstSeq is the first_seq of the bucket of cluster id: its
// creator's clock in µs.
func bucketFirstSeq(ctx context.Context, t *testing.T, js jetstream.JetStream, id string) uint64 {
	t.Helper()
	s, err := js.Stream(ctx, "KV_"+wire.BucketName(id))
	if err != nil {
		t.Fatal(err)
	}
	return s.CachedInfo().Config.FirstSeq
}

// bucketCreated is when the server created the bucket of cluster id.
func bucketCreated(ctx context.Context, t *testing.T, js jetstream.JetStream, id string) time.Time {
	t.Helper()
	s, err := js.Stream(ctx, "KV_"+wire.BucketName(id))
	if err != nil {
		t.Fatal(err)
	}
	return s.CachedInfo().Created
}

func bucketAge(ctx context.Context, t *testing.T, js jetstream.JetStream, id string) time.Duration {
	t.Helper()
	s, err := js.Stream(ctx, "KV_"+wire.BucketName(id))
	if err != nil {
		t.Fatal(err)
	}
	info := s.CachedInfo()
	return info.TimeStamp.Sub(info.Created)
}
