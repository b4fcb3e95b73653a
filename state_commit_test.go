package cluster

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/natstest"
)

func TestStateCommitAllOrNothing(t *testing.T) {
	srv, rec, id := setup(t)
	nodes := startNodes(t, srv, rec, id, "a", "b")
	leader := waitOneLeader(t, nodes, 5*time.Second)
	follower := without(nodes, leader)[0]
	writes := []StateWrite{{Key: "acct.1", Value: []byte("90")}, {Key: "acct.2", Value: []byte("110")}, {Key: "log.7", Value: []byte("1->2:10")}}
	if _, err := leader.State().Commit(ctx(t), writes...); !errors.Is(err, ErrBucketConfig) {
		t.Fatalf("Commit before EnableCommit = %v, want ErrBucketConfig", err)
	}
	if err := follower.State().EnableCommit(ctx(t)); err != nil {
		t.Fatal(err)
	}
	rev, err := leader.State().Commit(ctx(t), writes...)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range writes {
		e, err := follower.State().Get(ctx(t), w.Key)
		if err != nil || string(e.Value) != string(w.Value) || e.Epoch != leader.Epoch() || e.Revision > rev {
			t.Errorf("Get(%s) = %+v, %v", w.Key, e, err)
		}
	}
	if _, err := follower.State().Commit(ctx(t), writes...); !errors.Is(err, ErrNotLeader) {
		t.Errorf("follower Commit = %v, want ErrNotLeader", err)
	}
	if _, err := leader.State().Commit(ctx(t), StateWrite{Key: "x"}, StateWrite{Key: "x"}); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("Commit with a key twice = %v, want ErrInvalidKey", err)
	}
	if _, err := leader.State().Commit(ctx(t), StateWrite{Key: "acct.1", Delete: true}, StateWrite{Key: "acct.3", Value: []byte("0")}); err != nil {
		t.Fatal(err)
	}
	if _, err := follower.State().Get(ctx(t), "acct.1"); !errors.Is(err, ErrKeyNotFound) {
		t.Errorf("Get of a key deleted by Commit = %v", err)
	}

	// At the server: a batch whose lease precondition is stale is refused
	// whole.
	st, _ := leader.State().store()
	epoch, stale, _ := leader.view.tenure(time.Now())
	kv := bindKV(t, srv.URL(), id)
	if _, err := kv.Put(ctx(t), leaseKey, []byte(`{"node_id":"x","epoch":50}`)); err != nil {
		t.Fatal(err)
	}
	_, err = publishBatch(ctx(t), st, []StateWrite{{Key: "acct.1", Value: []byte("0")}, {Key: "acct.2", Value: []byte("200")}},
		epoch, stale, kvSubject(bucketName(id), leaseKey))
	var apiErr *jetstream.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode != jetstream.JSErrCodeStreamWrongLastSequence {
		t.Fatalf("stale batch = %v, want API error %d", err, jetstream.JSErrCodeStreamWrongLastSequence)
	}
	if e, err := kv.Get(ctx(t), stateKVKey("acct.2")); err != nil || string(e.Value()) != "110" {
		t.Errorf("acct.2 after the stale batch = %v, %v; want 110", e, err)
	}
	if _, err := kv.Get(ctx(t), stateKVKey("acct.1")); !errors.Is(err, jetstream.ErrKeyDeleted) && !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Errorf("acct.1 after the stale batch: %v, want still deleted", err)
	}
}

// On an R3 bucket, commits racing the leader's renewals all succeed.
func TestStateJSClusterCommitRacesRenewals(t *testing.T) {
	natstest.CheckLeaks(t)
	c := natstest.RunCluster(t, 3)
	rec := newRecorder()
	id := uniqueClusterID(t)
	nodes := startClusterNodes(t, c, id, rec, 2)
	leader := waitOneLeader(t, nodes, 10*time.Second)
	if err := leader.State().EnableCommit(ctx(t)); err != nil {
		t.Fatal(err)
	}
	last, _ := leader.Lease()
	renewals := 0
	for i := 0; renewals < 2; i++ { // until the lease has moved twice under the commits
		if l, _ := leader.Lease(); l.Revision != last.Revision {
			last, renewals = l, renewals+1
		}
		v := []byte(strconv.Itoa(i))
		if _, err := leader.State().Commit(ctx(t), StateWrite{Key: "a", Value: v}, StateWrite{Key: "b", Value: v}); err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
	}
	for _, n := range nodes {
		a, err1 := n.State().Get(ctx(t), "a")
		b, err2 := n.State().Get(ctx(t), "b")
		if err1 != nil || err2 != nil || string(a.Value) != string(b.Value) {
			t.Errorf("%s: a = %q (%v), b = %q (%v)", n.NodeID(), a.Value, err1, b.Value, err2)
		}
	}
	rec.check(t)
}
