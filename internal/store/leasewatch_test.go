package store

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ozanturksever/go-cluster/internal/election"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// watchWait bounds the wait for one update on a healthy watch.
const watchWait = 5 * time.Second

// openStore opens the bucket of a new cluster on nc.
func openStore(t *testing.T, nc *nats.Conn) *Store {
	t.Helper()
	s, err := Open(testCtx(t), nc, API{}, clusterID(t), Options{}, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// startWatch watches s's lease key and stops the watch at the test's end.
func startWatch(t *testing.T, s *Store) *LeaseWatch {
	t.Helper()
	w, err := s.Watch(context.Background(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		var wg sync.WaitGroup
		w.Stop(&wg)
		wg.Wait()
	})
	return w
}

// next is the watch's next update, failing the test after wait.
func next(t *testing.T, w *LeaseWatch, wait time.Duration) LeaseUpdate {
	t.Helper()
	select {
	case u, ok := <-w.Updates():
		if !ok {
			t.Fatal("the watch's channel closed")
		}
		return u
	case <-time.After(wait):
		t.Fatalf("no update within %v", wait)
	}
	return LeaseUpdate{}
}

// put writes value under the lease key of s's bucket.
func put(t *testing.T, s *Store, value string) uint64 {
	t.Helper()
	return putOn(t, s.JetStream(), s.Bucket(), value)
}

// putOn writes value under the lease key of bucket, through js.
func putOn(t *testing.T, js jetstream.JetStream, bucket, value string) uint64 {
	t.Helper()
	kv, err := js.KeyValue(testCtx(t), bucket)
	if err != nil {
		t.Fatal(err)
	}
	rev, err := kv.Put(testCtx(t), wire.LeaseKey, []byte(value))
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

func wantEntry(t *testing.T, u LeaseUpdate, rev uint64, op election.Op, value string) {
	t.Helper()
	if u.Synced || u.Entry.Rev != rev || u.Entry.Op != op || string(u.Entry.Value) != value || u.Consumer == "" {
		t.Fatalf("update %+v (value %q), want the entry of revision %d, op %v, value %q from a named consumer", u, u.Entry.Value, rev, op, value)
	}
}

// The key's current value first, then Synced, then every change: all
// delivered by one consumer, named.
func TestLeaseWatchCurrentThenChanges(t *testing.T) {
	natstest.CheckLeaks(t)
	s := openStore(t, natstest.RunServer(t).Connect(t))
	put(t, s, "old")
	rev := put(t, s, "current")
	w := startWatch(t, s)
	first := next(t, w, watchWait)
	wantEntry(t, first, rev, election.Put, "current")
	if u := next(t, w, watchWait); !u.Synced || u.Consumer != first.Consumer {
		t.Fatalf("after the current value: %+v, want Synced from consumer %q", u, first.Consumer)
	}
	for _, v := range []string{"a", "b"} {
		rev := put(t, s, v)
		u := next(t, w, watchWait)
		wantEntry(t, u, rev, election.Put, v)
		if u.Consumer != first.Consumer {
			t.Fatalf("entry %d came from consumer %q, the watch's is %q", rev, u.Consumer, first.Consumer)
		}
	}
}

// An absent key: Synced first, then a later write.
func TestLeaseWatchAbsentKey(t *testing.T) {
	natstest.CheckLeaks(t)
	s := openStore(t, natstest.RunServer(t).Connect(t))
	w := startWatch(t, s)
	u := next(t, w, watchWait)
	if !u.Synced || u.Consumer == "" || u.Entry.Rev != 0 {
		t.Fatalf("first update of a watch on an absent key: %+v, want Synced from a named consumer", u)
	}
	rev := put(t, s, "v")
	wantEntry(t, next(t, w, watchWait), rev, election.Put, "v")
}

// Delete and purge markers come as Delete and Purge.
func TestLeaseWatchMarkers(t *testing.T) {
	natstest.CheckLeaks(t)
	s := openStore(t, natstest.RunServer(t).Connect(t))
	w := startWatch(t, s)
	if u := next(t, w, watchWait); !u.Synced {
		t.Fatalf("first update %+v, want Synced", u)
	}
	rev := put(t, s, "v")
	wantEntry(t, next(t, w, watchWait), rev, election.Put, "v")
	if err := s.KV().Delete(testCtx(t), wire.LeaseKey); err != nil {
		t.Fatal(err)
	}
	wantEntry(t, next(t, w, watchWait), rev+1, election.Delete, "")
	if err := s.KV().Purge(testCtx(t), wire.LeaseKey); err != nil {
		t.Fatal(err)
	}
	wantEntry(t, next(t, w, watchWait), rev+2, election.Purge, "")
}

// recreateWait bounds how long a watch takes to follow a bucket made
// anew: the stream's deletion ends the consumer at once (the server tells
// its pull requests), or, missed, heartbeats missed twice in a row do
// (4*watchHeartbeat); then the stream's absence is retried every
// watchRetryMax at most.
const recreateWait = 4*watchHeartbeat + 2*watchRetryMax + watchWait

// The bucket deleted and created again while the watch runs: the new
// bucket's entries all come, from its first, at revisions above every one
// of the old bucket (first_seq: docs/design.md §2.1), delivered by a
// consumer other than every one seen before.
func TestLeaseWatchRecreatedBucket(t *testing.T) {
	natstest.CheckLeaks(t)
	s := openStore(t, natstest.RunServer(t).Connect(t))
	for _, v := range []string{"a", "b", "c", "d"} {
		put(t, s, v)
	}
	w := startWatch(t, s)
	seen := map[string]bool{}
	for {
		u := next(t, w, watchWait)
		seen[u.Consumer] = true
		if u.Synced {
			break
		}
	}
	rev := put(t, s, "e")
	wantEntry(t, next(t, w, watchWait), rev, election.Put, "e")
	if err := s.JetStream().DeleteKeyValue(testCtx(t), s.Bucket()); err != nil {
		t.Fatal(err)
	}
	createAgain(t, s.JetStream(), s.clusterID)
	r1, r2 := put(t, s, "new1"), put(t, s, "new2")
	if r1 <= rev || r2 != r1+1 {
		t.Fatalf("the new bucket's writes at revisions %d and %d; want in a row above the old bucket's %d", r1, r2, rev)
	}
	u := next(t, w, recreateWait)
	wantEntry(t, u, r1, election.Put, "new1")
	if seen[u.Consumer] {
		t.Fatalf("the new bucket's first entry came from consumer %q, seen before the bucket was deleted (%v)", u.Consumer, seen)
	}
	u2 := next(t, w, watchWait)
	wantEntry(t, u2, r2, election.Put, "new2")
	if seen[u2.Consumer] {
		t.Fatalf("the new bucket's second entry came from consumer %q, seen before", u2.Consumer)
	}
}

// Stop ends the watch: the channel closes and no goroutine is left
// (CheckLeaks); so does closing the connection.
func TestLeaseWatchStop(t *testing.T) {
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	s := openStore(t, srv.Connect(t))
	put(t, s, "v")
	w, err := s.Watch(context.Background(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	w.Stop(&wg)
	wg.Wait()
	drain(t, w)
	stream, err := s.JetStream().Stream(testCtx(t), wire.KVStream(s.Bucket()))
	if err != nil {
		t.Fatal(err)
	}
	if n := stream.CachedInfo().State.Consumers; n != 0 {
		t.Errorf("the stream has %d consumers after Stop, want 0 (deleted)", n)
	}

	nc := srv.Connect(t)
	s2, err := Open(testCtx(t), nc, API{}, s.clusterID, Options{}, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	w2, err := s2.Watch(context.Background(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
	drain(t, w2)
	var wg2 sync.WaitGroup
	w2.Stop(&wg2)
	wg2.Wait()
}

// drain reads the watch's channel until it closes.
func drain(t *testing.T, w *LeaseWatch) {
	t.Helper()
	deadline := time.After(watchWait)
	for {
		select {
		case _, ok := <-w.Updates():
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("the watch's channel did not close")
		}
	}
}

// The watch's heartbeat follows the renewals: one and a half
// RenewIntervals, within what jetstream takes, so that a consumer hears
// one only when a renewal did not come.
func TestPaceWatchFollowsTheRenewals(t *testing.T) {
	for _, c := range []struct{ renew, want time.Duration }{
		{500 * time.Millisecond, watchHeartbeat},
		{3 * time.Second, watchHeartbeat},
		{10 * time.Second, 15 * time.Second},
		{time.Minute, watchHeartbeatMax},
	} {
		var s Store
		s.PaceWatch(c.renew)
		if s.watchHeartbeat != c.want {
			t.Errorf("PaceWatch(%v): heartbeat %v, want %v", c.renew, s.watchHeartbeat, c.want)
		}
	}
}
