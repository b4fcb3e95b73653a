package cluster

// Bad input: every invalid configuration and hostile identifier, garbage
// and oversized values written into the lease of a running cluster, and
// buckets created beforehand with the wrong settings. Each must give its
// documented error, none may panic, none may wedge a running cluster.

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// hostileIdentifiers are values no ClusterID or NodeID may take: each would
// break a subject, a bucket name or a key, or is not what it looks like.
var hostileIdentifiers = map[string]string{
	"empty":            "",
	"star":             "*",
	"gt":               ">",
	"star in token":    "a*",
	"gt in token":      "a>",
	"lone dot":         ".",
	"leading dot":      ".a",
	"trailing dot":     "a.",
	"dots":             "..",
	"double dot":       "a..b",
	"space":            "node 1",
	"leading space":    " a",
	"trailing space":   "a ",
	"tab":              "a\tb",
	"newline":          "a\nb",
	"carriage return":  "a\rb",
	"NUL":              "a\x00b",
	"DEL":              "a\x7fb",
	"slash":            "a/b",
	"backslash":        `a\b`,
	"dollar":           "$SYS",
	"colon":            "a:b",
	"equals":           "a=b",
	"percent":          "a%b",
	"quote":            `a"b`,
	"too long":         strings.Repeat("a", wire.MaxNodeIDLen+1),
	"very long":        strings.Repeat("a", 1<<16),
	"non-UTF-8":        "a\xffb",
	"truncated UTF-8":  "a\xc3",
	"overlong UTF-8":   "\xc0\xaf",
	"unicode letter":   "nöde",
	"unicode digit":    "٣",
	"zero width space": "a\u200bb",
	"fullwidth dot":    "a．b",
	"RTL override":     "a\u202eb",
}

// hostileClusterIDs are values a NodeID may take but a ClusterID may not:
// the bucket name "cluster-<ClusterID>" allows no '.'.
var hostileClusterIDs = map[string]string{
	"dot":       "a.b",
	"host name": "db1.example.com",
	"too long":  strings.Repeat("a", wire.MaxIdentifierLen+1),
}

func TestHostileIdentifiersAreRejected(t *testing.T) {
	t.Parallel()
	base := Config{ClusterID: "c", NodeID: "n", NATSURLs: []string{"nats://127.0.0.1:4222"}}
	for name, id := range hostileIdentifiers {
		for _, field := range []string{"ClusterID", "NodeID"} {
			t.Run(field+"/"+name, func(t *testing.T) {
				cfg := base
				if field == "ClusterID" {
					cfg.ClusterID = id
				} else {
					cfg.NodeID = id
				}
				checkInvalid(t, cfg, field)
				validate := wire.CheckIdentifier
				if field == "NodeID" {
					validate = wire.CheckNodeID
				}
				if err := validate(field, id); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), field) {
					t.Errorf("validate %s %q = %v", field, id, err)
				}
			})
		}
	}
	for name, id := range hostileClusterIDs {
		t.Run("ClusterID/"+name, func(t *testing.T) {
			cfg := base
			cfg.ClusterID = id
			checkInvalid(t, cfg, "ClusterID")
			if err := wire.CheckIdentifier("ClusterID", id); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "ClusterID") {
				t.Errorf("ValidateIdentifier(%q) = %v", id, err)
			}
			cfg.ClusterID, cfg.NodeID = "c", id
			if err := cfg.check(); err != nil {
				t.Errorf("NodeID %q refused: %v", id, err)
			}
		})
	}
}

// checkInvalid asserts that Validate, NewNode and NewObserver all reject
// cfg with an error wrapping ErrInvalidConfig that names field.
func checkInvalid(t *testing.T, cfg Config, field string) {
	t.Helper()
	errs := map[string]error{"check": cfg.check()}
	n, err := NewNode(cfg, nil)
	errs["NewNode"] = err
	o, oerr := NewObserver(cfg, nil)
	errs["NewObserver"] = oerr
	if n != nil || o != nil {
		t.Errorf("a Node was returned for an invalid config")
	}
	for what, err := range errs {
		if !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s = %v, want ErrInvalidConfig", what, err)
			continue
		}
		if !strings.Contains(err.Error(), field) {
			t.Errorf("%s error %q does not name %s", what, err, field)
		}
	}
}

func TestInvalidConfigurationsAreRejected(t *testing.T) {
	t.Parallel()
	const s = time.Second
	huge := time.Duration(math.MaxInt64)
	cases := []struct {
		name  string
		mod   func(*Config)
		field string
	}{
		{"no URLs and no Conn", func(c *Config) { c.NATSURLs = nil }, "NATSURLs"},
		{"empty URL list", func(c *Config) { c.NATSURLs = []string{} }, "NATSURLs"},
		{"empty URL", func(c *Config) { c.NATSURLs = []string{""} }, "NATSURLs[0]"},
		{"empty second URL", func(c *Config) { c.NATSURLs = []string{"nats://127.0.0.1:4222", ""} }, "NATSURLs[1]"},
		{"LeaseTTL negative", func(c *Config) { c.LeaseTTL = -s }, "LeaseTTL"},
		{"LeaseTTL 1ns", func(c *Config) { c.LeaseTTL = 1 }, "LeaseTTL"},
		{"LeaseTTL just under minimum", func(c *Config) { c.LeaseTTL = wire.MinLeaseTTL - 1 }, "LeaseTTL"},
		{"RenewInterval negative", func(c *Config) { c.RenewInterval = -1 }, "RenewInterval"},
		{"RenewInterval equal to LeaseTTL", func(c *Config) { c.LeaseTTL, c.RenewInterval = 3*s, 3*s }, "RenewInterval"},
		{"RenewInterval just over LeaseTTL/3", func(c *Config) { c.LeaseTTL, c.RenewInterval = 3*s, s+1 }, "RenewInterval"},
		{"RenewInterval over default LeaseTTL", func(c *Config) { c.RenewInterval = 4 * s }, "RenewInterval"},
		// 3*RenewInterval overflows int64 and wraps negative: still far
		// over LeaseTTL/3, so it must be refused.
		{"RenewInterval overflowing 3x", func(c *Config) {
			c.LeaseTTL, c.RenewInterval, c.RequestTimeout = 10*s, huge/3+1, s
		}, "RenewInterval"},
		{"RenewInterval max", func(c *Config) { c.LeaseTTL, c.RenewInterval, c.RequestTimeout = 10*s, huge, s }, "RenewInterval"},
		{"SafetyMargin negative", func(c *Config) { c.SafetyMargin = -1 }, "SafetyMargin"},
		{"SafetyMargin over LeaseTTL/2", func(c *Config) { c.SafetyMargin = 5*s + 1 }, "SafetyMargin"},
		{"RequestTimeout negative", func(c *Config) { c.RequestTimeout = -1 }, "RequestTimeout"},
		{"RequestTimeout over LeaseTTL-SafetyMargin", func(c *Config) { c.RequestTimeout = 9*s + 1 }, "RequestTimeout"},
		{"RequestTimeout max", func(c *Config) { c.RequestTimeout = huge }, "RequestTimeout"},
		{"DrainTimeout negative", func(c *Config) { c.DrainTimeout = -1 }, "DrainTimeout"},
		{"Cooldown negative", func(c *Config) { c.Cooldown = -1 }, "Cooldown"},
		{"Bucket.Replicas negative", func(c *Config) { c.Bucket.Replicas = -1 }, "Bucket.Replicas"},
		{"Bucket.Replicas 6", func(c *Config) { c.Bucket.Replicas = 6 }, "Bucket.Replicas"},
		{"Bucket.Replicas huge", func(c *Config) { c.Bucket.Replicas = math.MaxInt }, "Bucket.Replicas"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{ClusterID: "c", NodeID: "n", NATSURLs: []string{"nats://127.0.0.1:4222"}}
			tc.mod(&cfg)
			checkInvalid(t, cfg, tc.field)
		})
	}
}

// TestStartRejectsUnusableConnectionSettings: settings that validate but
// cannot work fail Start with an error, promptly, and leave Done closed.
// (A URL that does not parse and a credentials file that does not exist
// are refused by Validate: TestConnectionSettingsRefusedByValidate.)
func TestStartRejectsUnusableConnectionSettings(t *testing.T) {
	// Runs alone: it bounds Start's failure from above (3.5s), which load beside it would stretch.
	natstest.CheckLeaks(t)
	notCreds := filepath.Join(t.TempDir(), "not.creds")
	if err := os.WriteFile(notCreds, []byte("not a creds file"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]Config{
		"unsupported URL":   {NATSURLs: []string{"gopher://127.0.0.1:1"}},
		"creds not a creds": {NATSURLs: []string{"nats://127.0.0.1:1"}, NATSCredentials: notCreds},
	}
	for name, cfg := range cases {
		t.Run(name, func(t *testing.T) {
			cfg.ClusterID, cfg.NodeID, cfg.Logger = "c", "n", testLogger()
			n, err := NewNode(cfg, nil)
			if err != nil {
				t.Fatalf("NewNode: %v", err)
			}
			c, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			start := time.Now()
			if err := n.Start(c); err == nil {
				_ = n.Stop(c)
				t.Fatal("Start succeeded")
			}
			if d := time.Since(start); d > 3500*time.Millisecond {
				t.Errorf("Start took %v to fail", d)
			}
			select {
			case <-n.Done():
			default:
				t.Error("Done not closed after a failed Start")
			}
			if err := n.Start(c); !errors.Is(err, ErrAlreadyStarted) {
				t.Errorf("second Start = %v, want ErrAlreadyStarted", err)
			}
		})
	}
}

// garbageValue is something written into the lease key by someone else.
type garbageValue struct {
	name string
	data []byte
	op   string // "put" (default), "delete" or "purge"
}

func garbageValues() []garbageValue {
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 256)
	for i := range random {
		random[i] = byte(rng.UintN(256))
	}
	nested := strings.Repeat("[", 2000) + strings.Repeat("]", 2000)
	return []garbageValue{
		{name: "empty", data: []byte{}},
		{name: "random bytes", data: random},
		{name: "non-UTF-8", data: []byte("{\"node_id\":\"\xff\xfe\",\"epoch\":1}")},
		{name: "truncated JSON", data: []byte(`{"node_id":"x","epoch":`)},
		{name: "JSON null", data: []byte("null")},
		{name: "JSON array", data: []byte("[1,2,3]")},
		{name: "deeply nested JSON", data: []byte(nested)},
		{name: "negative epoch", data: []byte(`{"node_id":"x","epoch":-5}`)},
		{name: "huge ttl", data: []byte(`{"node_id":"x","epoch":5,"ttl_ms":9223372036854775807}`)},
		{name: "wildcard holder", data: []byte(`{"node_id":">","epoch":5}`)},
		{name: "just over wire.MaxLeaseSize", data: append([]byte(`{"node_id":"x","epoch":1,"pad":"`), append(bytes.Repeat([]byte("p"), wire.MaxLeaseSize), '"', '}')...)},
		{name: "oversized 512KiB", data: bytes.Repeat([]byte("G"), 512<<10)},
		{name: "delete marker", op: "delete"},
		{name: "purge marker", op: "purge"},
	}
}

// TestGarbageInLeaseNeverWedgesARunningCluster writes each garbage value
// into the lease of a running 3-node cluster: the leader must stop leading,
// a leader must be elected again with a higher epoch, and no node may fail.
func TestGarbageInLeaseNeverWedgesARunningCluster(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	rec := newRecorder()
	id := uniqueClusterID(t)
	var nodes []*Node
	for _, name := range []string{"a", "b", "c"} {
		cfg := testConfig(id, name, srv.URL())
		cfg.LeaseTTL, cfg.RenewInterval = 1500*time.Millisecond, 375*time.Millisecond
		nodes = append(nodes, startNode(t, cfg, rec, nil))
	}
	kv := openKV(t, srv.URL(), id)
	for _, g := range garbageValues() {
		before := waitOneLeader(t, nodes, 15*time.Second)
		epoch := before.Epoch()
		c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		var err error
		switch g.op {
		case "delete":
			err = kv.Delete(c, wire.LeaseKey)
		case "purge":
			err = kv.Purge(c, wire.LeaseKey)
		default:
			_, err = kv.Put(c, wire.LeaseKey, g.data)
		}
		cancel()
		if err != nil {
			t.Fatalf("%s: write: %v", g.name, err)
		}
		natstest.WaitFor(t, 5*time.Second, func() bool { return !before.IsLeader() }, "%s: leader kept leading over garbage", g.name)
		after := waitOneLeader(t, nodes, 15*time.Second)
		if after.Epoch() <= epoch {
			t.Errorf("%s: epoch %d after garbage, was %d", g.name, after.Epoch(), epoch)
		}
		for _, n := range nodes {
			select {
			case <-n.Done():
				t.Fatalf("%s: node %s stopped: %v", g.name, n.Config().NodeID, n.Err())
			default:
			}
		}
	}
	rec.check(t)
}

// TestForgedLowEpochNeverTurnsTheEpochBack: someone writes a well-formed
// released record with an epoch below the real one (an operator "resetting"
// the lease, or a restored backup). Nodes running now remember the higher
// epoch; nodes started afterwards have only the record and its revision.
// Epochs must still grow (docs/design.md §8.2), or a fenced resource refuses the
// new leader forever.
func TestForgedLowEpochNeverTurnsTheEpochBack(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	rec := newRecorder()
	id := uniqueClusterID(t)
	first := startNode(t, stableConfig(id, "a", srv.URL()), rec, nil)
	second := startNode(t, stableConfig(id, "b", srv.URL()), rec, nil)
	nodes := []*Node{first, second}
	for range 4 { // epoch 5
		l := waitOneLeader(t, nodes, 15*time.Second)
		epoch := l.Epoch()
		if err := l.StepDown(ctx(t)); err != nil {
			t.Fatal(err)
		}
		waitNewTenure(t, nodes, epoch)
	}
	high := waitOneLeader(t, nodes, 15*time.Second).Epoch()
	for _, n := range nodes {
		stopNode(t, n)
	}
	kv := openKV(t, srv.URL(), id)
	if _, err := kv.Put(ctx(t), wire.LeaseKey, []byte(`{"v":3,"node_id":"","epoch":1,"expires_at":"2024-01-01T00:00:00Z","acquired_at":"2024-01-01T00:00:00Z"}`)); err != nil {
		t.Fatal(err)
	}
	fresh := startNode(t, stableConfig(id, "c", srv.URL()), rec, nil)
	waitOneLeader(t, []*Node{fresh}, 15*time.Second)
	if got := fresh.Epoch(); got <= high {
		t.Errorf("epoch went back from %d to %d after a forged released record with epoch 1", high, got)
	}
}

// waitNewTenure waits until one node leads with an epoch above epoch. After
// StepDown the same node may win again once every node's cooldown is over.
func waitNewTenure(t *testing.T, nodes []*Node, epoch int64) {
	t.Helper()
	natstest.WaitFor(t, 15*time.Second, func() bool {
		ls := leaders(nodes)
		return len(ls) == 1 && ls[0].Epoch() > epoch
	}, "no new tenure after epoch %d", epoch)
}

// TestPreexistingBucketWithHistoryWorks: History above 1 costs storage but
// changes nothing: the watch and the CAS see the latest value only. The
// bucket is made by hand, as another tool would, and given an epoch base
// (go-cluster init --rebase): without one it is refused (design §2.1,
// TestStartRefusesAnotherProtocol).
func TestPreexistingBucketWithHistoryWorks(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	rec := newRecorder()
	id := uniqueClusterID(t)
	createBucket(t, srv.URL(), jetstream.KeyValueConfig{Bucket: wire.BucketName(id), History: 10, Metadata: rebased(wire.Protocol)})
	nodes := []*Node{
		startNode(t, testConfig(id, "a", srv.URL()), rec, nil),
		startNode(t, testConfig(id, "b", srv.URL()), rec, nil),
	}
	var last int64
	for range 3 {
		l := waitOneLeader(t, nodes, 10*time.Second)
		epoch := l.Epoch()
		if epoch <= last {
			t.Errorf("epoch %d after %d", epoch, last)
		}
		last = epoch
		if err := l.StepDown(ctx(t)); err != nil {
			t.Fatal(err)
		}
		waitNewTenure(t, nodes, epoch)
	}
	rec.check(t)
}

// TestPreexistingBucketWithTTLIsRefused: a bucket whose TTL (MaxAge)
// removes the lease record lets the epoch restart at 1, the bug docs/design.md
// §2.3 rules out: once every node has stopped, the released record ages out,
// and the next node to start creates the key again with epoch 1. Such a
// bucket must be refused at Start with an error naming the setting.
func TestPreexistingBucketWithTTLIsRefused(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	rec := newRecorder()
	id := uniqueClusterID(t)
	createBucket(t, srv.URL(), jetstream.KeyValueConfig{Bucket: wire.BucketName(id), TTL: 2 * time.Second})

	n, err := NewNode(stableConfig(id, "a", srv.URL()), rec.hooks("a", func() int64 { return 0 }, nil))
	if err != nil {
		t.Fatal(err)
	}
	startErr := n.Start(ctx(t))
	if startErr == nil {
		// Show the consequence: the epoch goes back.
		natstest.WaitFor(t, 10*time.Second, n.IsLeader, "a never led")
		stopNode(t, n)                 // releases epoch 1
		kv := bindKV(t, srv.URL(), id) // not openKV: it would reset the bucket's TTL
		natstest.WaitFor(t, 15*time.Second, func() bool {
			_, err := kv.Get(ctx(t), wire.LeaseKey)
			return errors.Is(err, jetstream.ErrKeyNotFound)
		}, "the bucket's TTL never removed the released record")
		b := startNode(t, stableConfig(id, "b", srv.URL()), rec, nil)
		natstest.WaitFor(t, 15*time.Second, b.IsLeader, "b never led")
		t.Fatalf("Start accepted a bucket with TTL 2s; after it aged out the released record of epoch 1, the next tenure has epoch %d", b.Epoch())
	}
	if !errors.Is(startErr, ErrInvalidConfig) || !strings.Contains(startErr.Error(), "TTL") {
		t.Errorf("Start = %v, want ErrInvalidConfig naming the bucket's TTL", startErr)
	}
}

// TestPreexistingBucketWithTinyMaxValueSizeFailsFast: a bucket whose
// MaxValueSize is smaller than a lease record refuses every write. Retrying
// cannot help, so the node must not campaign in silence forever: Start, or
// Done/Err soon after, reports it.
func TestPreexistingBucketWithTinyMaxValueSizeFailsFast(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	rec := newRecorder()
	id := uniqueClusterID(t)
	createBucket(t, srv.URL(), jetstream.KeyValueConfig{Bucket: wire.BucketName(id), MaxValueSize: 16})
	n, err := NewNode(testConfig(id, "a", srv.URL()), rec.hooks("a", func() int64 { return 0 }, nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Start(ctx(t)); err != nil {
		t.Logf("Start refused the bucket: %v", err)
		return
	}
	t.Cleanup(func() { stopNode(t, n) })
	select {
	case <-n.Done():
		t.Logf("node stopped: %v", n.Err())
		if n.Err() == nil {
			t.Error("Done closed without an Err")
		}
	case <-time.After(10 * time.Second):
		t.Errorf("after 10s (%d LeaseTTLs) the node neither leads nor reports why: IsLeader=%v Err=%v",
			int(10*time.Second/testTTL), n.IsLeader(), n.Err())
	}
}

// bindKV binds the cluster's existing bucket as it is.
func bindKV(t *testing.T, url, clusterID string) jetstream.KeyValue {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx(t), wire.BucketName(clusterID))
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

func createBucket(t *testing.T, url string, cfg jetstream.KeyValueConfig) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateKeyValue(ctx(t), cfg); err != nil {
		t.Fatalf("create bucket %+v: %v", cfg, err)
	}
}

// TestForgedOwnRecordDoesNotCrashTheProcess runs, in a child process, a node
// that stepped down and then finds a forged record naming it at its last
// epoch, with an acquired_at that decodes but cannot be encoded in UTC.
// The node hands such a record back (releaseStale), and must not panic: a
// panic on the election goroutine kills the application.
func TestForgedOwnRecordDoesNotCrashTheProcess(t *testing.T) {
	t.Parallel()
	if os.Getenv("GOCLUSTER_FORGED_CHILD") == "1" {
		forgedOwnRecordChild(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestForgedOwnRecordDoesNotCrashTheProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GOCLUSTER_FORGED_CHILD=1")
	out, err := cmd.CombinedOutput()
	if i := bytes.Index(out, []byte("panic: ")); i >= 0 {
		end := min(len(out), i+1500)
		t.Fatalf("the process crashed:\n%s", out[i:end])
	}
	if err != nil {
		t.Fatalf("child failed: %v\n%s", err, out)
	}
}

func forgedOwnRecordChild(t *testing.T) {
	srv := natstest.RunServer(t)
	rec := newRecorder()
	id := uniqueClusterID(t)
	cfg := stableConfig(id, "a", srv.URL())
	cfg.Cooldown = 500 * time.Millisecond
	a := startNode(t, cfg, rec, nil)
	natstest.WaitFor(t, 10*time.Second, a.IsLeader, "a never led")
	if err := a.StepDown(ctx(t)); err != nil {
		t.Fatal(err)
	}
	kv := openKV(t, srv.URL(), id)
	forged := `{"node_id":"a","epoch":1,"expires_at":"2024-01-01T00:00:00Z","acquired_at":"9999-12-31T23:59:59-01:00"}`
	if _, err := kv.Put(ctx(t), wire.LeaseKey, []byte(forged)); err != nil {
		t.Fatal(err)
	}
	// a hands the record back after its cooldown, then leads again.
	natstest.WaitFor(t, 15*time.Second, a.IsLeader, "a never led again")
}
