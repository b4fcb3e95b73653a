package cluster

import (
	"context"
	"errors"
	"fmt"
	"github.com/ozanturksever/go-cluster/state"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/faultproxy"
	"github.com/ozanturksever/go-cluster/internal/fenced"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// rawJS is a plain JetStream client on its own connection: what an
// operator or another tool sees.
func rawJS(t testing.TB, urls ...string) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(urls[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// stateMsgs returns every state message the bucket's stream still holds,
// oldest first.
func stateMsgs(t testing.TB, js jetstream.JetStream, clusterID string) []*jetstream.RawStreamMsg {
	t.Helper()
	s, err := js.Stream(ctx(t), wire.KVStream(wire.BucketName(clusterID)))
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	var out []*jetstream.RawStreamMsg
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && seq > 0; seq++ {
		m, err := s.GetMsg(ctx(t), seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Subject) > 0 && m.Subject != wire.KVSubject(wire.BucketName(clusterID), wire.LeaseKey) && strings.Contains(m.Subject, "."+fenced.KeyPrefix) {
			out = append(out, m)
		}
	}
	return out
}

func TestStateKeyValidation(t *testing.T) {
	t.Parallel()
	for _, k := range []string{"a", "config", "orders.42.status", "A-b_c.9"} {
		if err := fenced.ValidateKey(k); err != nil {
			t.Errorf("fenced.ValidateKey(%q) = %v", k, err)
		}
	}
	long := make([]byte, fenced.MaxKeyLen+1)
	for i := range long {
		long[i] = 'a'
	}
	for _, k := range []string{"", ".", "a.", ".a", "a..b", "a.*", "a.>", "a b", "ü", "a/b", string(long)} {
		err := fenced.ValidateKey(k)
		if !errors.Is(err, state.ErrInvalidKey) {
			t.Errorf("fenced.ValidateKey(%q) = %v, want state.ErrInvalidKey", k, err)
		}
	}
}

func TestStatePutGetOnLeaderAndFollower(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	// stableConfig: the leader must still lead for its Put and Delete.
	nodes := []*Node{
		startNode(t, stableConfig(id, "a", srv.URL()), rec, nil),
		startNode(t, stableConfig(id, "b", srv.URL()), rec, nil),
	}
	leader := waitOneLeader(t, nodes, 10*time.Second)
	follower := without(nodes, leader)[0]
	obs, err := NewObserver(testConfig(id, "o", srv.URL()), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := obs.State().Get(ctx(t), "k"); !errors.Is(err, ErrNotStarted) {
		t.Errorf("Get before Start = %v, want ErrNotStarted", err)
	}
	if err := obs.Start(ctx(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopNode(t, obs) })

	rev, err := leader.State().Put(ctx(t), "config.mode", []byte("fast"))
	if err != nil {
		t.Fatalf("leader Put: %v", err)
	}
	for _, n := range []*Node{leader, follower, obs} {
		e, err := n.State().Get(ctx(t), "config.mode")
		if err != nil {
			t.Fatalf("%s Get: %v", n.Config().NodeID, err)
		}
		if string(e.Value) != "fast" || e.Revision != rev || e.Epoch != leader.Epoch() || e.Key != "config.mode" {
			t.Errorf("%s Get = %+v, want fast at revision %d epoch %d", n.Config().NodeID, e, rev, leader.Epoch())
		}
	}
	// Any KV client sees the value and the writer's epoch.
	js := rawJS(t, srv.URL())
	s, err := js.Stream(ctx(t), wire.KVStream(wire.BucketName(id)))
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.GetLastMsgForSubject(ctx(t), wire.KVSubject(wire.BucketName(id), "state.config.mode"))
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Header.Get(fenced.EpochHeader); got != strconv.FormatInt(leader.Epoch(), 10) {
		t.Errorf("%s header = %q, want %d", fenced.EpochHeader, got, leader.Epoch())
	}

	if _, err := follower.State().Put(ctx(t), "config.mode", []byte("slow")); !errors.Is(err, ErrNotLeader) {
		t.Errorf("follower Put = %v, want ErrNotLeader", err)
	}
	if err := obs.State().Delete(ctx(t), "config.mode"); !errors.Is(err, ErrNotLeader) {
		t.Errorf("observer Delete = %v, want ErrNotLeader", err)
	}
	if _, err := leader.State().Put(ctx(t), "bad key", nil); !errors.Is(err, state.ErrInvalidKey) {
		t.Errorf("Put(bad key) = %v, want state.ErrInvalidKey", err)
	}
	if _, err := obs.State().Get(ctx(t), "missing"); !errors.Is(err, state.ErrKeyNotFound) {
		t.Errorf("Get(missing) = %v, want state.ErrKeyNotFound", err)
	}

	if _, err := leader.State().Put(ctx(t), "config.size", []byte("3")); err != nil {
		t.Fatal(err)
	}
	if _, err := leader.State().Put(ctx(t), "configx", []byte("no")); err != nil {
		t.Fatal(err)
	}
	keys, err := obs.State().Keys(ctx(t), "config")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(keys) != "[config.mode config.size]" {
		t.Errorf("Keys(config) = %v", keys)
	}
	if err := leader.State().Delete(ctx(t), "config.size"); err != nil {
		t.Fatal(err)
	}
	if _, err := follower.State().Get(ctx(t), "config.size"); !errors.Is(err, state.ErrKeyNotFound) {
		t.Errorf("Get after Delete = %v, want state.ErrKeyNotFound", err)
	}
	if keys, _ := obs.State().Keys(ctx(t), ""); fmt.Sprint(keys) != "[config.mode configx]" {
		t.Errorf("Keys() = %v", keys)
	}
}

func TestStateWatchInitialThenUpdates(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	leader := startNodes(t, srv, rec, id, "a")[0]
	waitOneLeader(t, []*Node{leader}, 5*time.Second)
	if _, err := leader.State().Put(ctx(t), "jobs.1", []byte("queued")); err != nil {
		t.Fatal(err)
	}
	// A key deleted before the watch begins is no current value.
	if _, err := leader.State().Put(ctx(t), "jobs.0", []byte("done")); err != nil {
		t.Fatal(err)
	}
	if err := leader.State().Delete(ctx(t), "jobs.0"); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx(t))
	defer cancel()
	w, err := leader.State().Watch(wctx, "jobs")
	if err != nil {
		t.Fatal(err)
	}
	next := func() state.Entry {
		t.Helper()
		select {
		case e := <-w.Updates():
			return e
		case <-time.After(5 * time.Second):
			t.Fatal("no watch entry")
		}
		return state.Entry{}
	}
	if e := next(); e.Key != "jobs.1" || string(e.Value) != "queued" {
		t.Errorf("initial entry = %+v", e)
	}
	select {
	case <-w.Synced():
	case <-time.After(5 * time.Second):
		t.Fatal("watch never synced")
	}
	if _, err := leader.State().Put(ctx(t), "jobs.2", []byte("running")); err != nil {
		t.Fatal(err)
	}
	if e := next(); e.Key != "jobs.2" || string(e.Value) != "running" {
		t.Errorf("update = %+v", e)
	}
	if err := leader.State().Delete(ctx(t), "jobs.1"); err != nil {
		t.Fatal(err)
	}
	if e := next(); e.Key != "jobs.1" || !e.Deleted {
		t.Errorf("deletion = %+v", e)
	}
	cancel()
	for range w.Updates() { // closed once the ctx has ended
	}
}

// The fence is the server's: a publish whose expected lease revision is
// not the lease's latest is refused, and nothing lands. Plain jetstream,
// no Node.
func TestStateFencedAtServer(t *testing.T) {
	t.Parallel()
	srv, _, id := setup(t)
	kv := openKV(t, srv.URL(), id)
	js := rawJS(t, srv.URL())
	rev1, err := kv.Put(ctx(t), wire.LeaseKey, []byte(`{"node_id":"a","epoch":1}`))
	if err != nil {
		t.Fatal(err)
	}
	leaseSubject := wire.KVSubject(wire.BucketName(id), wire.LeaseKey)
	subject := wire.KVSubject(wire.BucketName(id), fenced.KVKey("k"))
	if _, err := js.Publish(ctx(t), subject, []byte("first"), jetstream.WithExpectLastSequenceForSubject(rev1, leaseSubject)); err != nil {
		t.Fatalf("write fenced on the current lease revision: %v", err)
	}
	if _, err := kv.Put(ctx(t), wire.LeaseKey, []byte(`{"node_id":"b","epoch":2}`)); err != nil {
		t.Fatal(err)
	}
	_, err = js.Publish(ctx(t), subject, []byte("stale"), jetstream.WithExpectLastSequenceForSubject(rev1, leaseSubject))
	var apiErr *jetstream.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode != jetstream.JSErrCodeStreamWrongLastSequence {
		t.Fatalf("stale write = %v, want API error %d", err, jetstream.JSErrCodeStreamWrongLastSequence)
	}
	e, err := kv.Get(ctx(t), fenced.KVKey("k"))
	if err != nil || string(e.Value()) != "first" {
		t.Fatalf("state after the stale write = %v, %v; want first", e, err)
	}
}

// Writes racing the leader's own renewals all succeed: the write path
// retries with the revision each renewal leaves.
func TestStateWritesRaceRenewals(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	a := startNode(t, testConfig(id, "a", srv.URL()), rec, nil)
	waitOneLeader(t, []*Node{a}, 5*time.Second)
	raceRenewals(t, a, srv.URL())
}

func raceRenewals(t *testing.T, a *Node, url string) {
	t.Helper()
	kv := bindKV(t, url, a.Config().ClusterID)
	first, err := kv.Get(ctx(t), wire.LeaseKey)
	if err != nil {
		t.Fatal(err)
	}
	// Until the lease has been renewed four times (its revision grows with
	// the state writes too, so count the changes).
	var renewals sync.Map
	renewed := func() bool {
		if lease, err := kv.Get(ctx(t), wire.LeaseKey); err == nil && lease.Revision() != first.Revision() {
			renewals.Store(lease.Revision(), true)
		}
		n := 0
		renewals.Range(func(any, any) bool { n++; return true })
		return n >= 4
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 { // concurrent writers, to meet in-flight writes too
		wg.Go(func() {
			for i := 0; ; i++ {
				if renewed() {
					return
				}
				if _, err := a.State().Put(ctx(t), fmt.Sprintf("w%d", w), []byte(strconv.Itoa(i))); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("Put while the leader renews: %v", err)
	}
}

// Writes in flight while the leader steps down: every one that succeeded
// landed before the lease was released, none after, and none at all once
// the successor leads.
func TestStateWritesInFlightAcrossStepDown(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	nodes := startNodes(t, srv, rec, id, "a", "b")
	first := waitOneLeader(t, nodes, 5*time.Second)
	second := without(nodes, first)[0]
	epoch := first.Epoch()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	acked := map[uint64]bool{}
	for w := range 3 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				rev, err := first.State().Put(ctx(t), fmt.Sprintf("w%d.%d", w, i), []byte("x"))
				switch {
				case err == nil:
					mu.Lock()
					acked[rev] = true
					mu.Unlock()
				case !errors.Is(err, ErrNotLeader):
					t.Errorf("Put: %v", err)
					return
				}
			}
		})
	}
	natstest.WaitFor(t, 5*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return len(acked) > 20 }, "no writes acknowledged")
	if err := first.StepDown(ctx(t)); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 10*time.Second, second.IsLeader, "b did not take over")
	close(stop)
	wg.Wait()
	if _, err := first.State().Put(ctx(t), "late", nil); !errors.Is(err, ErrNotLeader) {
		t.Errorf("deposed leader Put = %v, want ErrNotLeader", err)
	}

	// The release record is the first lease record of the old tenure that
	// is not its own: no write of that tenure may come after it.
	js := rawJS(t, srv.URL())
	kv := bindKV(t, srv.URL(), id)
	hist, err := kv.History(ctx(t), wire.LeaseKey)
	if err != nil {
		t.Fatal(err)
	}
	var released uint64
	for _, h := range hist {
		if l, err := decodeLease(h.Value(), h.Revision()); err == nil && l.Epoch == epoch && l.NodeID == "" {
			released = h.Revision()
		}
	}
	if released == 0 {
		t.Fatal("no released record of the first tenure in the lease history")
	}
	landed := 0
	for _, m := range stateMsgs(t, js, id) {
		if m.Header.Get(fenced.EpochHeader) != strconv.FormatInt(epoch, 10) {
			continue
		}
		landed++
		if m.Sequence > released {
			t.Errorf("a write of epoch %d landed at %d, after the release at %d", epoch, m.Sequence, released)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for rev := range acked {
		if rev > released {
			t.Errorf("write acknowledged at %d, after the release at %d", rev, released)
		}
	}
	t.Logf("%d writes acknowledged, %d landed, release at %d", len(acked), landed, released)
	rec.check(t)
}

// The leader learns of the moved lease late (its connection's replies are
// delayed), so it sends the write believing it leads: the server refuses
// it, with state.ErrFenced, and nothing lands.
func TestStateFencedBeforeLeaderKnows(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	proxy := faultproxy.New(t, srv.Addr())
	a := startNode(t, stableConfig(id, "a", proxy.URL()), rec, nil)
	waitOneLeader(t, []*Node{a}, 5*time.Second)
	if _, err := a.State().Put(ctx(t), "k", []byte("before")); err != nil {
		t.Fatal(err)
	}
	proxy.Delay(300 * time.Millisecond)
	kv := bindKV(t, srv.URL(), id)
	if _, err := kv.Put(ctx(t), wire.LeaseKey, []byte(`{"node_id":"x","epoch":50}`)); err != nil {
		t.Fatal(err)
	}
	if !a.IsLeader() {
		t.Fatal("a already knows it lost the lease: the test proves nothing")
	}
	_, err := a.State().Put(ctx(t), "k", []byte("after"))
	if !errors.Is(err, state.ErrFenced) || !errors.Is(err, ErrNotLeader) {
		t.Fatalf("Put after the lease moved = %v, want state.ErrFenced (and ErrNotLeader)", err)
	}
	proxy.Restore()
	e, err := kv.Get(ctx(t), fenced.KVKey("k"))
	if err != nil || string(e.Value()) != "before" {
		t.Fatalf("state after the refused write = %v, %v; want before", e, err)
	}
}

func TestStateAfterStop(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	a := startNodes(t, srv, rec, id, "a")[0]
	waitOneLeader(t, []*Node{a}, 5*time.Second)
	stopNode(t, a)
	if _, err := a.State().Get(ctx(t), "k"); !errors.Is(err, ErrStopped) {
		t.Errorf("Get after Stop = %v, want ErrStopped", err)
	}
	if _, err := a.State().Put(ctx(t), "k", nil); !errors.Is(err, ErrStopped) {
		t.Errorf("Put after Stop = %v, want ErrStopped", err)
	}
	if _, err := a.State().Watch(ctx(t), ""); !errors.Is(err, ErrStopped) {
		t.Errorf("Watch after Stop = %v, want ErrStopped", err)
	}
}

// Each write carries its own message ID, so that a publish nats.go resends
// after "no responders" (the first copy may have been stored) is answered
// with the first copy's revision and not stored twice (chaos with route
// partitions found a value stored at two revisions).
//
// The server checks a write's fence (the lease's last revision) before its
// ID: a resend after a renewal is refused by the fence, not stored twice
// either, but proves nothing about the ID. Such a round is followed by
// another. Renewals every 2 s, and a resend two reads after its write,
// keep such rounds rare under load.
func TestStateWriteIsStoredOnceWhenResent(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	cfg := testConfig(id, "a", srv.URL())
	cfg.LeaseTTL, cfg.RenewInterval = 6*time.Second, 2*time.Second
	leader := startNode(t, cfg, rec, nil)
	waitOneLeader(t, []*Node{leader}, 10*time.Second)
	js := rawJS(t, srv.URL())
	stream, err := js.Stream(ctx(t), wire.KVStream(wire.BucketName(id)))
	if err != nil {
		t.Fatal(err)
	}
	kv := openKV(t, srv.URL(), id)
	puts := 0
	for deadline := time.Now().Add(30 * time.Second); ; {
		if time.Now().After(deadline) {
			t.Fatalf("a renewal came between each write and its resend for 30s (%d writes)", puts)
		}
		var written [2]*jetstream.RawStreamMsg
		for i := range written {
			rev, err := leader.State().Put(ctx(t), "k", []byte(strconv.Itoa(puts)))
			if err != nil {
				t.Fatal(err)
			}
			puts++
			if written[i], err = stream.GetMsg(ctx(t), rev); err != nil {
				t.Fatal(err)
			}
		}
		first, second := written[0].Header.Get(jetstream.MsgIDHeader), written[1].Header.Get(jetstream.MsgIDHeader)
		if first == "" || first == second {
			t.Fatalf("message IDs %q and %q: want one of its own per write", first, second)
		}
		// The resend, as nats.go makes it: the same message, the same ID.
		resend := nats.NewMsg(written[0].Subject)
		resend.Data, resend.Header = written[0].Data, written[0].Header
		ack, err := js.PublishMsg(ctx(t), resend)
		var apiErr *jetstream.APIError
		if errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence {
			lease, _ := leaseRevision(kv)
			if fence := written[0].Header.Get(jetstream.ExpectedLastSubjSeqHeader); fence != strconv.FormatUint(lease, 10) {
				t.Logf("a renewal (the lease at revision %d, the write's fence %s) came before the resend, which the fence refused", lease, fence)
				continue
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		if !ack.Duplicate || ack.Sequence != written[0].Sequence {
			t.Errorf("resend answered %+v; want a duplicate of revision %d", ack, written[0].Sequence)
		}
		break
	}
	if n := len(stateMsgs(t, js, id)); n != puts {
		t.Errorf("%d state messages after the resend, want %d", n, puts)
	}
}
