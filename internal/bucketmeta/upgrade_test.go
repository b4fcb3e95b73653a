package bucketmeta

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// v1Record is a lease record as protocol 1 wrote it: no "v".
func v1Record(t *testing.T, node string, epoch int64, expires time.Time, ttl time.Duration) []byte {
	t.Helper()
	data, err := json.Marshal(map[string]any{"node_id": node, "epoch": epoch, "expires_at": expires.UTC(),
		"acquired_at": expires.Add(-time.Hour).UTC(), "ttl_ms": ttl.Milliseconds()})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// upgradeOpts are the options of the tests: a TTL of 4s for buckets
// without one.
func upgradeOpts() UpgradeOptions {
	return UpgradeOptions{Key: "lease", LeaseTTL: 4 * time.Second, RequestTimeout: 5 * time.Second}
}

// checkReleased checks that the key holds the released record of this
// protocol Upgrade says it wrote, in the incarnation's range (P1): the
// first new node may take it at once.
func checkReleased(t *testing.T, kv jetstream.KeyValue, up Upgraded) {
	t.Helper()
	e, err := kv.Get(testCtx(t), "lease")
	if err != nil {
		t.Fatal(err)
	}
	l, err := wire.DecodeLease(e.Value(), e.Revision())
	if err != nil {
		t.Fatalf("the key holds %s: %v", e.Value(), err)
	}
	if !up.Rewritten || e.Revision() != up.Revision || l.Version != wire.Protocol || l.NodeID != "" || l.Epoch != up.Epoch {
		t.Errorf("Upgrade said %+v; the key holds %+v at revision %d", up, l, e.Revision())
	}
	if base := up.Base(); l.Epoch <= base || l.Epoch > base+int64(e.Revision()) {
		t.Errorf("epoch %d outside the incarnation's range (%d, %d]", l.Epoch, base, base+int64(e.Revision()))
	}
}

// A bucket of protocol 1 whose old nodes stopped (their last record a
// release) is marked, given the TTL metadata and an epoch base at the
// server's time (above every epoch led before: they count from the
// creation time), and its key rewritten as a released record at the jump
// epoch base + rev + 1; a second run leaves the new record alone.
func TestUpgradeReleasedRecord(t *testing.T) {
	js := runJS(t)
	ctx := testCtx(t)
	kv, stream := newBucket(t, js, "cluster-old", nil)
	created := info(t, js, stream).Created
	old := created.UnixMicro() // protocol 1's first epoch: the creation time
	if _, err := kv.Put(ctx, "lease", v1Record(t, "n1", old, time.Now(), 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	released := v1Record(t, "", old, time.Now(), 10*time.Second)
	rev, err := kv.Put(ctx, "lease", released)
	if err != nil {
		t.Fatal(err)
	}

	up, err := Upgrade(ctx, js, stream, upgradeOpts())
	if err != nil {
		t.Fatal(err)
	}
	checkReleased(t, kv, up)
	if base := up.Base(); up.Epoch != base+int64(rev)+1 || base <= created.UnixMicro() || base != up.After.EpochBase {
		t.Errorf("epoch %d over revision %d, base %d; want the epoch_base, above the creation time %d, + %d + 1", up.Epoch, rev, base, created.UnixMicro(), rev)
	}
	if up.After != metaOf(t, js, stream) || up.After != (Meta{LeaseTTL: 4 * time.Second, MaxTTL: 4 * time.Second, Protocol: wire.Protocol, EpochBase: up.After.EpochBase}) {
		t.Errorf("metadata after the upgrade: %+v", up.After)
	}
	if !strings.Contains(up.Found, "released record of protocol 1") {
		t.Errorf("found %q", up.Found)
	}

	again, err := Upgrade(ctx, js, stream, upgradeOpts())
	if err != nil || again.Rewritten || !strings.Contains(again.Found, fmt.Sprintf("protocol %d", wire.Protocol)) || again.After != up.After {
		t.Errorf("a second Upgrade: %+v, %v; want the record of protocol %d left as it is", again, err, wire.Protocol)
	}
	if e, err := kv.Get(ctx, "lease"); err != nil || e.Revision() != up.Revision {
		t.Errorf("the key after a second Upgrade: %v, %v; want revision %d", e, err, up.Revision)
	}
}

// An absent key in a bucket of protocol 1 gets a create at base + L + 1,
// L the stream's last sequence; the TTL a bucket has is kept.
func TestUpgradeAbsentKey(t *testing.T) {
	js := runJS(t)
	ctx := testCtx(t)
	kv, stream := newBucket(t, js, "cluster-empty", map[string]string{KeyLeaseTTL: "7000"})
	for range 3 {
		if _, err := kv.Put(ctx, "cooldown-n1", []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}
	st := info(t, js, stream)
	up, err := Upgrade(ctx, js, stream, upgradeOpts())
	if err != nil {
		t.Fatal(err)
	}
	checkReleased(t, kv, up)
	if L := st.State.LastSeq; up.Epoch != up.Base()+int64(L)+1 || up.Revision != L+1 || up.Base() <= st.Created.UnixMicro() {
		t.Errorf("absent at %d: epoch %d at revision %d, base %d; want base + %d at %d, the base above the creation time", L, up.Epoch, up.Revision, up.Base(), L+1, L+1)
	}
	if up.After.LeaseTTL != 7*time.Second || up.After.MaxTTL != 7*time.Second {
		t.Errorf("the bucket's own TTL 7s became %+v", up.After)
	}
}

// A marker, or garbage, at revision r is jumped over at base + r + 1.
func TestUpgradeOverAMarker(t *testing.T) {
	js := runJS(t)
	ctx := testCtx(t)
	kv, stream := newBucket(t, js, "cluster-marker", nil)
	if _, err := kv.Put(ctx, "lease", v1Record(t, "", 5, time.Now(), time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := kv.Delete(ctx, "lease"); err != nil {
		t.Fatal(err)
	}
	st := info(t, js, stream)
	up, err := Upgrade(ctx, js, stream, upgradeOpts())
	if err != nil {
		t.Fatal(err)
	}
	checkReleased(t, kv, up)
	if up.Epoch != up.Base()+int64(st.State.LastSeq)+1 || !strings.Contains(up.Found, "del marker") {
		t.Errorf("over the marker at %d: %+v", st.State.LastSeq, up)
	}
}

// A protocol 1 epoch at or above the jump epoch raises epoch_base to it,
// so that epochs still grow across the move.
func TestUpgradeCarriesAHigherEpoch(t *testing.T) {
	js := runJS(t)
	ctx := testCtx(t)
	kv, stream := newBucket(t, js, "cluster-high", nil)
	high := time.Now().Add(time.Hour).UnixMicro()
	rev, err := kv.Put(ctx, "lease", v1Record(t, "", high, time.Now(), time.Second))
	if err != nil {
		t.Fatal(err)
	}
	up, err := Upgrade(ctx, js, stream, upgradeOpts())
	if err != nil {
		t.Fatal(err)
	}
	checkReleased(t, kv, up)
	if up.After.EpochBase != high || up.Epoch != high+int64(rev)+1 {
		t.Errorf("over epoch %d at revision %d: epoch_base %d, epoch %d", high, rev, up.After.EpochBase, up.Epoch)
	}
}

// A bucket already of this protocol keeps its key when it holds no
// record of another protocol: the election waits those values out itself.
func TestUpgradeLeavesAMarkedBucketsKey(t *testing.T) {
	js := runJS(t)
	ctx := testCtx(t)
	_, stream := newBucket(t, js, "cluster-new", ForNewBucket(10*time.Second, wire.Protocol))
	up, err := Upgrade(ctx, js, stream, upgradeOpts())
	if err != nil || up.Rewritten || up.Before != up.After {
		t.Errorf("Upgrade of a new bucket: %+v, %v; want nothing changed", up, err)
	}
	if st := info(t, js, stream); st.State.LastSeq != 0 {
		t.Errorf("Upgrade of a new bucket wrote: last sequence %d", st.State.LastSeq)
	}

	_, marked := newBucket(t, js, "cluster-marked", ForNewBucket(10*time.Second, wire.BucketProtocol))
	if up, err := Upgrade(ctx, js, marked, upgradeOpts()); err != nil || up.Rewritten || up.Before != up.After {
		t.Errorf("Upgrade of a bucket marked %d (this version's, its ceiling in the account's bucket): %+v, %v; want nothing changed", wire.BucketProtocol, up, err)
	}

	_, newer := newBucket(t, js, "cluster-newer", ForNewBucket(10*time.Second, wire.BucketProtocol+1))
	if _, err := Upgrade(ctx, js, newer, upgradeOpts()); !errors.Is(err, wire.ErrProtocolVersion) {
		t.Errorf("Upgrade of a bucket of a newer protocol = %v, want ErrProtocolVersion", err)
	}
	if m := metaOf(t, js, newer); m.Protocol != wire.BucketProtocol+1 {
		t.Errorf("the newer bucket was marked %d", m.Protocol)
	}
}

// A record of protocol 1 naming a holder whose expires_at is ahead of the
// server's time is refused, nothing changed; once it has expired, or with
// Wait once its ttl_ms has passed unchanged, it is replaced.
func TestUpgradeRefusesAHeldLease(t *testing.T) {
	js := runJS(t)
	ctx := testCtx(t)
	kv, stream := newBucket(t, js, "cluster-held", nil)
	rev, err := kv.Put(ctx, "lease", v1Record(t, "n1", time.Now().UnixMicro(), time.Now().Add(time.Hour), 300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Upgrade(ctx, js, stream, upgradeOpts())
	if !errors.Is(err, ErrLeaseHeld) || !strings.Contains(err.Error(), "held by n1") || !strings.Contains(err.Error(), "stop every node") {
		t.Fatalf("Upgrade over a live holder = %v, want ErrLeaseHeld naming it", err)
	}
	if st := info(t, js, stream); st.State.LastSeq != rev || len(st.Config.Metadata) != len(serverKeys(st.Config)) {
		t.Errorf("the refused Upgrade changed the bucket: last sequence %d (was %d), metadata %v", st.State.LastSeq, rev, st.Config.Metadata)
	}

	o := upgradeOpts()
	o.Wait = true
	start := time.Now()
	up, err := Upgrade(ctx, js, stream, o)
	if err != nil {
		t.Fatal(err)
	}
	checkReleased(t, kv, up)
	if up.Waited != 300*time.Millisecond || time.Since(start) < up.Waited {
		t.Errorf("waited %v (%v in all), want the record's ttl_ms, 300ms", up.Waited, time.Since(start))
	}

	_, expired := newBucket(t, js, "cluster-expired", nil)
	kv2, _ := js.KeyValue(ctx, "cluster-expired")
	if _, err := kv2.Put(ctx, "lease", v1Record(t, "n1", 7, time.Now().Add(-time.Minute), 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if up, err := Upgrade(ctx, js, expired, upgradeOpts()); err != nil || up.Waited != 0 {
		t.Errorf("Upgrade over an expired holder: %+v, %v; want it rewritten at once", up, err)
	} else {
		checkReleased(t, kv2, up)
	}
}

// With Wait, an old node still renewing its lease is found out: the key
// changes during the wait, and the compare-and-swap fails.
func TestUpgradeWaitFindsARunningNode(t *testing.T) {
	js := runJS(t)
	ctx := testCtx(t)
	kv, stream := newBucket(t, js, "cluster-running", nil)
	const ttl = time.Second
	rev, err := kv.Put(ctx, "lease", v1Record(t, "n1", 9, time.Now().Add(ttl), ttl))
	if err != nil {
		t.Fatal(err)
	}
	// The old leader: renews every 100ms until the upgrade is over.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for r := rev; ; {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			next, err := kv.Update(ctx, "lease", v1Record(t, "n1", 9, time.Now().Add(ttl), ttl), r)
			if err != nil {
				t.Errorf("renewal: %v", err)
				return
			}
			r = next
		}
	}()
	o := upgradeOpts()
	o.Wait, o.LeaseTTL = true, ttl
	_, err = Upgrade(ctx, js, stream, o)
	close(stop)
	wg.Wait()
	if !errors.Is(err, ErrLeaseChanged) {
		t.Fatalf("Upgrade with Wait beside a renewing holder = %v, want ErrLeaseChanged", err)
	}
	if l, err := kv.Get(ctx, "lease"); err != nil || !strings.Contains(string(l.Value()), `"node_id":"n1"`) {
		t.Errorf("the old holder's record was replaced: %v, %v", l, err)
	}
}

// Through a leaf node, the key is written under the hub's domain, as a
// KV put is.
func TestUpgradeThroughALeafNode(t *testing.T) {
	natstest.CheckLeaks(t)
	hub := natstest.RunHub(t, "hub")
	leaf := natstest.RunLeaf(t, hub, "leaf")
	js, err := jetstream.NewWithDomain(leaf.Connect(t), "hub")
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	kv, stream := newBucket(t, js, "cluster-far", nil)
	up, err := Upgrade(ctx, js, stream, upgradeOpts())
	if err != nil {
		t.Fatal(err)
	}
	checkReleased(t, kv, up)
}

// A cancelled wait leaves the key as it was.
func TestUpgradeWaitEndsWithItsContext(t *testing.T) {
	js := runJS(t)
	kv, stream := newBucket(t, js, "cluster-cancel", nil)
	rev, err := kv.Put(testCtx(t), "lease", v1Record(t, "n1", 9, time.Now().Add(time.Hour), time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	o := upgradeOpts()
	o.Wait = true
	if _, err := Upgrade(ctx, js, stream, o); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Upgrade waiting an hour under a 300ms context = %v, want DeadlineExceeded", err)
	}
	if e, err := kv.Get(testCtx(t), "lease"); err != nil || e.Revision() != rev {
		t.Errorf("the key after a cancelled wait: %v, %v; want revision %d", e, err, rev)
	}
}
