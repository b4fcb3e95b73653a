package cluster

import (
	"context"
	"errors"
	"fmt"
	"github.com/ozanturksever/go-cluster/state"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/fenced"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/store"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// behindFirst sends its write's first attempt both to the stream's leader
// and to a server behind the stream, and returns the answer of the one
// behind: what a client meets when a stream leader cut off from its peers
// answers from its old copy while the write (or a copy held in a route)
// lands at the leader that replaced it. Later attempts go to the leader.
type behindFirst struct {
	fenced.Sender
	behind fenced.Sender // the same write (same message IDs), sent to the server behind
	sent   int
}

func (w *behindFirst) Send(ctx context.Context, epoch int64, rev uint64) (*jetstream.PubAck, error) {
	w.sent++
	if w.sent > 1 {
		return w.Sender.Send(ctx, epoch, rev)
	}
	if _, err := w.Sender.Send(ctx, epoch, rev); err != nil {
		return nil, fmt.Errorf("the copy to the stream's leader: %w", err)
	}
	return w.behind.Send(ctx, epoch, rev)
}

// storeBehind is a bucket of the cluster's name on a server of its own
// whose lease subject holds one message: a copy of the stream from before
// the tenure's latest lease record, its sequences from the same first
// sequence, firstSeq.
func storeBehind(t *testing.T, clusterID string, firstSeq uint64) *store.Store {
	t.Helper()
	srv := natstest.RunServer(t)
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	st, err := store.Open(ctx(t), nc, store.API{}, clusterID, store.Options{}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// Made again from the first sequence of the bucket it copies.
	made, err := st.JetStream().Stream(ctx(t), wire.KVStream(st.Bucket()))
	if err != nil {
		t.Fatal(err)
	}
	again := made.CachedInfo().Config
	again.FirstSeq = firstSeq
	if err := st.JetStream().DeleteStream(ctx(t), again.Name); err != nil {
		t.Fatal(err)
	}
	if _, err := st.JetStream().CreateStream(ctx(t), again); err != nil {
		t.Fatal(err)
	}
	if st, err = store.Open(ctx(t), nc, store.API{}, clusterID, store.Options{}, time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := st.KV().Put(ctx(t), wire.LeaseKey, []byte(`{"node_id":"old","epoch":1}`)); err != nil {
		t.Fatal(err)
	}
	stream, err := st.JetStream().Stream(ctx(t), wire.KVStream(st.Bucket()))
	if err != nil {
		t.Fatal(err)
	}
	cfg := stream.CachedInfo().Config
	cfg.AllowAtomicPublish = true
	if _, err := st.JetStream().UpdateStream(ctx(t), cfg); err != nil {
		t.Fatal(err)
	}
	return st
}

// leaderPastFirstRecord waits until the leader's tenure has renewed past
// its bucket's first revision, first, so that the server behind has an
// older lease record.
func leaderPastFirstRecord(t *testing.T, leader *Node, first uint64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, rev, ok := fence(leader); ok && rev > first {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the leader did not renew")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// leaderAndServerBehind starts leader "a" on a server of its own, with
// atomic batches allowed, once it has renewed past its first record; st is
// its store, behind a server holding an older copy of its bucket
// (storeBehind).
func leaderAndServerBehind(t *testing.T) (srv *natstest.Server, id string, leader *Node, st, behind *store.Store) {
	t.Helper()
	srv, rec, id := setup(t)
	leader = startNodes(t, srv, rec, id, "a")[0]
	waitOneLeader(t, []*Node{leader}, 5*time.Second)
	if err := leader.State().EnableCommit(ctx(t)); err != nil {
		t.Fatal(err)
	}
	leaderPastFirstRecord(t, leader, uint64(firstEpoch(t, srv.URL(), id)))
	st, err := stateStore(leader)
	if err != nil {
		t.Fatal(err)
	}
	return srv, id, leader, st, storeBehind(t, id, uint64(firstEpoch(t, srv.URL(), id)))
}

// A Put refused by a server behind the stream, while its copy landed at
// the stream's leader, is not state.ErrFenced: it is retried under its message
// ID and returns the revision of the copy that landed, stored once.
func TestStatePutRefusedByAServerBehind(t *testing.T) {
	t.Parallel()
	srv, id, leader, st, behind := leaderAndServerBehind(t)
	put := &fenced.Single{Store: st, Subject: fenced.Subject(st.Bucket(), "k"), Value: []byte("v"),
		LeaseSubject: wire.KVSubject(st.Bucket(), wire.LeaseKey), MsgID: "put-1"}
	copyBehind := *put
	copyBehind.Store = behind
	rev, err := leader.eng.Fenced().Run(ctx(t), st, &behindFirst{Sender: put, behind: &copyBehind})
	if err != nil {
		t.Fatalf("Put whose copy landed = %v; want its revision", err)
	}
	msgs := stateMsgs(t, rawJS(t, srv.URL()), id)
	if len(msgs) != 1 || msgs[0].Sequence != rev {
		t.Fatalf("%d state messages, Put returned revision %d; want the one copy's revision", len(msgs), rev)
	}
}

// The same for a Commit: the resend is answered as a duplicate, and the
// Commit returns the revision of the copy that landed, stored once.
func TestStateCommitRefusedByAServerBehind(t *testing.T) {
	t.Parallel()
	srv, id, leader, st, behind := leaderAndServerBehind(t)
	writes := []fenced.Write{{Key: "a", Value: []byte("1")}, {Key: "b", Value: []byte("2")}}
	b := fenced.NewBatch(st, writes, time.Second)
	copyBehind := *b
	copyBehind.Store = behind
	rev, err := leader.eng.Fenced().Run(ctx(t), st, &behindFirst{Sender: b, behind: &copyBehind})
	if err != nil {
		t.Fatalf("Commit whose copy landed = %v; want its revision", err)
	}
	msgs := stateMsgs(t, rawJS(t, srv.URL()), id)
	if len(msgs) != 2 || msgs[1].Sequence != rev || msgs[0].Sequence != rev-1 {
		t.Fatalf("%d state messages, Commit returned revision %d; want the one copy, stored once", len(msgs), rev)
	}
}

// A Commit whose every write has an Expect carries the lease check on a
// marker at its end; a resend of a Commit that landed finds the marker's
// revision and returns the last write's.
func TestStateCommitWithExpectsRefusedByAServerBehind(t *testing.T) {
	t.Parallel()
	srv, id, leader, st, behind := leaderAndServerBehind(t)
	writes := []fenced.Write{{Key: "a", Value: []byte("1"), Expect: fenced.ExpectAbsent()}}
	b := fenced.NewBatch(st, writes, time.Second)
	copyBehind := *b
	copyBehind.Store = behind
	rev, err := leader.eng.Fenced().CommitWith(ctx(t), st, &behindFirst{Sender: b, behind: &copyBehind}, b)
	if err != nil {
		t.Fatalf("Commit whose copy landed = %v; want its revision", err)
	}
	e, err := leader.State().Get(ctx(t), "a")
	if err != nil || e.Revision != rev {
		t.Fatalf("Get = %+v, %v; Commit returned revision %d", e, err, rev)
	}
	if msgs := stateMsgs(t, rawJS(t, srv.URL()), id); len(msgs) != 1 {
		t.Fatalf("%d state messages; want the one copy", len(msgs))
	}
}

// A refusal of a key's check by a server that has stored a later revision
// of the key is state.ErrConflict, and a Put after another node's record is
// refused: state.ErrFenced by the server, or ErrNotLeader alone if the node saw
// the record first.
func TestStateRefusalsThatProveSomething(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	leader := startNodes(t, srv, rec, id, "a")[0]
	waitOneLeader(t, []*Node{leader}, 5*time.Second)
	if err := leader.State().EnableCommit(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := leader.State().Put(ctx(t), "a", []byte("0")); err != nil {
		t.Fatal(err)
	}
	if _, err := leader.State().Put(ctx(t), "a", []byte("1")); err != nil {
		t.Fatal(err)
	}
	_, err := leader.State().Commit(ctx(t), state.Write{Key: "a", Value: []byte("2"), Expect: state.ExpectRevision(1)})
	if !errors.Is(err, state.ErrConflict) || errors.Is(err, state.ErrFenced) {
		t.Errorf("Commit expecting an old revision = %v; want state.ErrConflict", err)
	}
	kv := bindKV(t, srv.URL(), id)
	if _, err := kv.Put(ctx(t), wire.LeaseKey, []byte(`{"node_id":"x","epoch":50}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := leader.State().Put(ctx(t), "a", []byte("3")); !errors.Is(err, state.ErrFenced) && !errors.Is(err, ErrNotLeader) {
		t.Errorf("Put after the lease moved = %v; want state.ErrFenced", err)
	}
}
