package store

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ozanturksever/go-cluster/internal/election"
	"github.com/ozanturksever/go-cluster/internal/faultproxy"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// A watch whose consumer is lost makes one consumer in its place, not
// two: the watch alone replaces its consumers. When jetstream replaced
// one too (an ordered consumer resets itself on the same errors), every
// loss cost the server two consumer creations and two deletions; a
// server too slow to send heartbeats then saw every watch on it do so at
// once, and again when the creations timed out (issue 43: 10,000
// clusters on one server).
func TestLeaseWatchReplacesALostConsumerOnce(t *testing.T) {
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	s := openStore(t, srv.Connect(t))
	w := startWatch(t, s)
	if u := next(t, w, watchWait); !u.Synced {
		t.Fatalf("first update %+v, want Synced (no value yet)", u)
	}
	first := put(t, s, "a")
	u := next(t, w, watchWait)
	wantEntry(t, u, first, election.Put, "a")

	spy := srv.Connect(t)
	creates := count(t, spy, "$JS.API.CONSUMER.CREATE."+wire.KVStream(s.Bucket())+".>")

	// The server deletes the consumer: the watch is told at once.
	if err := s.JetStream().DeleteConsumer(testCtx(t), wire.KVStream(s.Bucket()), u.Consumer); err != nil {
		t.Fatal(err)
	}
	rev := put(t, s, "b")
	got := next(t, w, recreateWait)
	wantEntry(t, got, rev, election.Put, "b")
	if got.Consumer == u.Consumer {
		t.Fatalf("delivered by the deleted consumer %q", u.Consumer)
	}
	// Every request the server had before this round trip is counted.
	if err := spy.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := s.Conn().Flush(); err != nil {
		t.Fatal(err)
	}
	if err := spy.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := creates.Load(); n != 1 {
		t.Errorf("%d consumers created in place of the lost one, want 1", n)
	}
}

// A consumer creation the server carries out but answers too late is
// asked again under the same name, and the server hands over the
// consumer it made: a watch that replaces its consumer on a slow server
// leaves none behind (each stayed its 5 minutes of inactivity, and a
// server too slow for its watches gathered them by the ten thousand:
// issue 43).
func TestLeaseWatchLeavesNoConsumerBehindOnASlowServer(t *testing.T) {
	natstest.CheckLeaks(t)
	srv, px, s := proxiedStore(t, 300*time.Millisecond)
	w := startWatch(t, s)
	u := next(t, w, watchWait)
	if !u.Synced {
		t.Fatalf("first update %+v, want Synced (no value yet)", u)
	}
	admin := srv.Connect(t)
	js, err := jetstream.New(admin)
	if err != nil {
		t.Fatal(err)
	}
	stream := wire.KVStream(s.Bucket())
	creates := make(chan struct{}, 16)
	sub, err := admin.Subscribe("$JS.API.CONSUMER.CREATE."+stream+".>", func(*nats.Msg) {
		select {
		case creates <- struct{}{}:
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := admin.Flush(); err != nil {
		t.Fatal(err)
	}

	// Every answer now comes after the watch's timeout: the consumer
	// is lost, and two creations in its place are carried out unanswered.
	px.Delay(time.Second)
	if err := js.DeleteConsumer(testCtx(t), stream, u.Consumer); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		select {
		case <-creates:
		case <-time.After(10 * time.Second):
			t.Fatal("the watch did not try to replace its lost consumer twice within 10s")
		}
	}
	px.Restore()
	rev := putOn(t, js, s.Bucket(), "b")
	wantEntry(t, next(t, w, watchSlowRetryMax+watchWait), rev, election.Put, "b")
	info, err := js.Stream(testCtx(t), stream)
	if err != nil {
		t.Fatal(err)
	}
	if n := info.CachedInfo().State.Consumers; n != 1 {
		t.Errorf("the stream has %d consumers after the watch replaced its own on a slow server, want 1", n)
	}
}

// Heartbeats late once are no loss: the watch keeps its consumer, and
// asks the server for no other (a server too busy to send them in time
// had every watch on it make a new consumer at once: issue 43). Late
// again with nothing delivered between, they are one.
func TestLeaseWatchKeepsItsConsumerThroughHeartbeatsLateOnce(t *testing.T) {
	natstest.CheckLeaks(t)
	srv, px, s := proxiedStore(t, 2*time.Second)
	const heartbeat = 500 * time.Millisecond // jetstream's least
	s.watchHeartbeat = heartbeat
	w := startWatch(t, s)
	u := next(t, w, watchWait)
	if !u.Synced {
		t.Fatalf("first update %+v, want Synced (no value yet)", u)
	}
	creates := count(t, srv.Connect(t), "$JS.API.CONSUMER.CREATE."+wire.KVStream(s.Bucket())+".>")
	// Everything the server sends comes 2.2 heartbeats late from now on:
	// jetstream misses two once (the first sent after now comes 2.2
	// heartbeats after the last one before it), then they come every
	// heartbeat again.
	px.Delay(2*heartbeat + heartbeat/5)
	rev := put(t, s, "a")
	got := next(t, w, watchWait)
	wantEntry(t, got, rev, election.Put, "a")
	if got.Consumer != u.Consumer {
		t.Errorf("delivered by consumer %q, want the one before the heartbeats were late, %q", got.Consumer, u.Consumer)
	}
	if n := creates.Load(); n != 0 {
		t.Errorf("%d consumers created for heartbeats late once, want 0", n)
	}

	// Stalled: heartbeats missed twice in a row, the consumer is lost,
	// and replaced once the server answers.
	first := w.current()
	px.Stall()
	deadline := time.Now().Add(6*heartbeat + watchWait)
	for !lost(w, first) {
		if time.Now().After(deadline) {
			t.Fatal("the consumer of a stalled watch not taken for lost")
		}
		time.Sleep(10 * time.Millisecond)
	}
	px.Restore()
	rev = put(t, s, "b")
	got = next(t, w, watchWait)
	wantEntry(t, got, rev, election.Put, "b")
	if got.Consumer == u.Consumer {
		t.Errorf("after a stall of heartbeats missed twice, still the first consumer %q", u.Consumer)
	}
}

// lost says f is no longer the watch's live consumer.
func lost(w *LeaseWatch, f *followed) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return f.dead
}

// proxiedStore opens the bucket of a new cluster on a connection through
// a fault proxy, with lookupTimeout.
func proxiedStore(t *testing.T, lookupTimeout time.Duration) (*natstest.Server, *faultproxy.Proxy, *Store) {
	t.Helper()
	srv := natstest.RunServer(t)
	px := faultproxy.New(t, srv.Addr())
	nc, err := nats.Connect(px.URL(), nats.MaxReconnects(-1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	s, err := Open(testCtx(t), nc, API{}, clusterID(t), Options{}, lookupTimeout)
	if err != nil {
		t.Fatal(err)
	}
	return srv, px, s
}

// count counts the messages on subject that nc receives from now on.
func count(t *testing.T, nc *nats.Conn, subject string) *atomic.Int64 {
	t.Helper()
	var n atomic.Int64
	sub, err := nc.Subscribe(subject, func(*nats.Msg) { n.Add(1) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return &n
}

// A watch on a server whose answers take more than half the lookup
// timeout (but less than all of it) still replaces its consumer: each
// request has the timeout to itself. When the creation and the stream
// info that follows it shared one, no attempt could ever complete, and
// the watch stayed blind for as long as the server stayed that slow.
func TestLeaseWatchReplacesItsConsumerOnAServerSlowerThanHalfTheTimeout(t *testing.T) {
	natstest.CheckLeaks(t)
	srv, px, s := proxiedStore(t, time.Second)
	w := startWatch(t, s)
	u := next(t, w, watchWait)
	if !u.Synced {
		t.Fatalf("first update %+v, want Synced (no value yet)", u)
	}
	js, err := jetstream.New(srv.Connect(t))
	if err != nil {
		t.Fatal(err)
	}
	px.Delay(700 * time.Millisecond)
	if err := js.DeleteConsumer(testCtx(t), wire.KVStream(s.Bucket()), u.Consumer); err != nil {
		t.Fatal(err)
	}
	rev := putOn(t, js, s.Bucket(), "b")
	// Three answers, each 700ms late, then the delivery.
	wantEntry(t, next(t, w, 2*watchWait), rev, election.Put, "b")
}
