package bucketmeta

import (
	"errors"
	"maps"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// SetLeaseTTL changes the TTL of a live bucket: the ceiling only grows,
// the stream keeps its creation time (its identity), the server's own
// metadata keys, other keys and the rest of its configuration.
func TestSetLeaseTTL(t *testing.T) {
	js := runJS(t)
	ctx := testCtx(t)
	meta := ForNewBucket(10*time.Second, 2)
	meta["app.owner"] = "ops"
	_, stream := newBucket(t, js, "cluster-ttl", meta)
	first := info(t, js, stream)
	if len(serverKeys(first.Config)) == 0 {
		t.Fatalf("the server wrote no _nats.* metadata (%v): the test would not see them lost", first.Config.Metadata)
	}

	for _, step := range []struct {
		ttl, lease, ceiling time.Duration
	}{
		{15 * time.Second, 15 * time.Second, 15 * time.Second}, // up: both
		{5 * time.Second, 5 * time.Second, 15 * time.Second},   // down: the ceiling stays
		{12 * time.Second, 12 * time.Second, 15 * time.Second}, // up, below the ceiling
		{20 * time.Second, 20 * time.Second, 20 * time.Second},
	} {
		before := metaOf(t, js, stream)
		c, err := SetLeaseTTL(ctx, js, stream, step.ttl)
		if err != nil {
			t.Fatalf("SetLeaseTTL(%v): %v", step.ttl, err)
		}
		now := metaOf(t, js, stream)
		if c.Before != before || c.After != now || now.LeaseTTL != step.lease || now.MaxTTL != step.ceiling || now.Protocol != 2 {
			t.Errorf("SetLeaseTTL(%v): change %+v, bucket %+v; want lease %v, ceiling %v", step.ttl, c, now, step.lease, step.ceiling)
		}
	}

	last := info(t, js, stream)
	if !last.Created.Equal(first.Created) {
		t.Errorf("the stream's creation time moved from %v to %v: a new identity", first.Created, last.Created)
	}
	if got, want := serverKeys(last.Config), serverKeys(first.Config); !reflect.DeepEqual(got, want) {
		t.Errorf("the server's metadata keys were %v, now %v", want, got)
	}
	if last.Config.Metadata["app.owner"] != "ops" {
		t.Errorf("another key's value was lost: %v", last.Config.Metadata)
	}
	a, b := first.Config, last.Config
	a.Metadata, b.Metadata = nil, nil
	if !reflect.DeepEqual(a, b) {
		t.Errorf("the configuration changed beyond its metadata:\nbefore %+v\nafter  %+v", a, b)
	}
}

// On a bucket without TTL metadata (one made by protocol 1) SetLeaseTTL
// writes both keys; over a lease_ttl without a ceiling, the ceiling is at
// least the old TTL.
func TestSetLeaseTTLWritesWhatIsAbsent(t *testing.T) {
	js := runJS(t)
	ctx := testCtx(t)
	_, bare := newBucket(t, js, "cluster-bare", nil)
	if _, err := SetLeaseTTL(ctx, js, bare, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	if m := metaOf(t, js, bare); m != (Meta{LeaseTTL: 3 * time.Second, MaxTTL: 3 * time.Second}) {
		t.Errorf("a bare bucket after SetLeaseTTL(3s): %+v", m)
	}

	_, half := newBucket(t, js, "cluster-half", map[string]string{KeyLeaseTTL: "10000"})
	if _, err := SetLeaseTTL(ctx, js, half, 4*time.Second); err != nil {
		t.Fatal(err)
	}
	if m := metaOf(t, js, half); m.LeaseTTL != 4*time.Second || m.MaxTTL != 10*time.Second {
		t.Errorf("lease_ttl 10s without a ceiling, then SetLeaseTTL(4s): %+v; want the ceiling at the old 10s", m)
	}
}

// A TTL the metadata cannot hold, and metadata that does not parse (the
// ceiling is then unknown), are refused and change nothing.
func TestSetLeaseTTLRefuses(t *testing.T) {
	js := runJS(t)
	ctx := testCtx(t)
	_, stream := newBucket(t, js, "cluster-ok", ForNewBucket(10*time.Second, 2))
	for _, ttl := range []time.Duration{0, -time.Second, 1500 * time.Microsecond, 25 * time.Hour} {
		if _, err := SetLeaseTTL(ctx, js, stream, ttl); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), KeyLeaseTTL) {
			t.Errorf("SetLeaseTTL(%v) = %v, want ErrInvalid naming %s", ttl, err, KeyLeaseTTL)
		}
	}
	if m := metaOf(t, js, stream); m.LeaseTTL != 10*time.Second || m.MaxTTL != 10*time.Second {
		t.Errorf("refused changes changed the bucket: %+v", m)
	}

	_, bad := newBucket(t, js, "cluster-bad", map[string]string{KeyLeaseTTL: "10000", KeyLeaseTTLMax: "long"})
	if _, err := SetLeaseTTL(ctx, js, bad, 5*time.Second); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), KeyLeaseTTLMax) {
		t.Errorf("SetLeaseTTL over an unreadable ceiling = %v, want ErrInvalid naming %s", err, KeyLeaseTTLMax)
	}
	if got := info(t, js, bad).Config.Metadata; got[KeyLeaseTTL] != "10000" || got[KeyLeaseTTLMax] != "long" {
		t.Errorf("the refused change wrote %v", got)
	}
	if _, err := SetLeaseTTL(ctx, js, "KV_cluster-none", 5*time.Second); !errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Errorf("SetLeaseTTL of a missing bucket = %v, want ErrStreamNotFound", err)
	}
}

// Rebase sets epoch_base to the server's time now, above every epoch of
// the incarnation as it was, and only ever raises it; the stream keeps its
// creation time and the rest of its metadata.
func TestRebase(t *testing.T) {
	js := runJS(t)
	ctx := testCtx(t)
	_, stream := newBucket(t, js, "cluster-rebase", ForNewBucket(10*time.Second, 2))
	first := info(t, js, stream)

	c, err := Rebase(ctx, js, stream)
	if err != nil {
		t.Fatal(err)
	}
	after := info(t, js, stream)
	if c.Before.EpochBase != 0 || c.After != metaOf(t, js, stream) || c.After.LeaseTTL != 10*time.Second || c.After.Protocol != 2 {
		t.Errorf("Rebase: %+v", c)
	}
	// The server's clock: after the creation, and no later than the
	// time the server stamped on a later reply.
	if base := c.After.EpochBase; base <= first.Created.UnixMicro() || base > after.TimeStamp.UnixMicro() {
		t.Errorf("epoch_base %d is not the server's time between the creation (%d) and now (%d)", base, first.Created.UnixMicro(), after.TimeStamp.UnixMicro())
	}
	if c.Base() != c.After.EpochBase || !after.Created.Equal(first.Created) {
		t.Errorf("base %d, epoch_base %d; created %v then %v", c.Base(), c.After.EpochBase, first.Created, after.Created)
	}
	if got, want := serverKeys(after.Config), serverKeys(first.Config); !reflect.DeepEqual(got, want) {
		t.Errorf("the server's metadata keys were %v, now %v", want, got)
	}

	again, err := Rebase(ctx, js, stream)
	if err != nil || again.Before.EpochBase != c.After.EpochBase || again.After.EpochBase <= c.After.EpochBase {
		t.Errorf("a second Rebase: %+v, %v; want a base above %d", again, err, c.After.EpochBase)
	}

	// A base ahead of the server's clock (a clock set back since) still
	// grows, by one.
	ahead := time.Now().Add(time.Hour).UnixMicro()
	cfg := after.Config
	cfg.Metadata = maps.Clone(cfg.Metadata)
	cfg.Metadata[KeyEpochBase] = strconv.FormatInt(ahead, 10)
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if c, err := Rebase(ctx, js, stream); err != nil || c.After.EpochBase != ahead+1 {
		t.Errorf("Rebase over a base ahead of the clock: %+v, %v; want %d", c, err, ahead+1)
	}
}

// The cluster's TTL ceiling in the members bucket only goes up: a lower
// TTL leaves it, a higher one raises it (docs/design.md §2.7).
func TestRaiseClusterMaxTTLNeverLowers(t *testing.T) {
	js := runJS(t)
	_, stream := newBucket(t, js, "members-up", map[string]string{KeyLeaseTTLMax: "5000"})
	c, err := RaiseClusterMaxTTL(testCtx(t), js, stream, 2*time.Second)
	if err != nil || c.After.MaxTTL != 5*time.Second {
		t.Fatalf("raised to 2s: %+v, %v; want 5s kept", c.After, err)
	}
	c, err = RaiseClusterMaxTTL(testCtx(t), js, stream, 9*time.Second)
	if err != nil || c.After.MaxTTL != 9*time.Second || metaOf(t, js, stream).MaxTTL != 9*time.Second {
		t.Fatalf("raised to 9s: %+v, %v", c.After, err)
	}
}
