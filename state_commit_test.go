package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/ozanturksever/go-cluster/state"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/fenced"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

func TestStateCommitAllOrNothing(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	nodes := startNodes(t, srv, rec, id, "a", "b")
	leader := waitOneLeader(t, nodes, 5*time.Second)
	follower := without(nodes, leader)[0]
	writes := []state.Write{{Key: "acct.1", Value: []byte("90")}, {Key: "acct.2", Value: []byte("110")}, {Key: "log.7", Value: []byte("1->2:10")}}
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
	if _, err := leader.State().Commit(ctx(t), state.Write{Key: "x"}, state.Write{Key: "x"}); !errors.Is(err, state.ErrInvalidCommit) {
		t.Errorf("Commit with a key twice = %v, want state.ErrInvalidCommit", err)
	}
	if _, err := leader.State().Commit(ctx(t), state.Write{Key: "acct.1", Delete: true}, state.Write{Key: "acct.3", Value: []byte("0")}); err != nil {
		t.Fatal(err)
	}
	if _, err := follower.State().Get(ctx(t), "acct.1"); !errors.Is(err, state.ErrKeyNotFound) {
		t.Errorf("Get of a key deleted by Commit = %v", err)
	}

	// At the server: a batch whose lease precondition is stale is refused
	// whole.
	st, _ := stateStore(leader)
	epoch, stale, _ := fence(leader)
	kv := bindKV(t, srv.URL(), id)
	if _, err := kv.Put(ctx(t), wire.LeaseKey, []byte(`{"node_id":"x","epoch":50}`)); err != nil {
		t.Fatal(err)
	}
	_, err = fenced.NewBatch(st, []fenced.Write{{Key: "acct.1", Value: []byte("0")}, {Key: "acct.2", Value: []byte("200")}}, time.Second).
		Publish(ctx(t), epoch, stale)
	var apiErr *jetstream.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode != jetstream.JSErrCodeStreamWrongLastSequence {
		t.Fatalf("stale batch = %v, want API error %d (leader: %v)", err, jetstream.JSErrCodeStreamWrongLastSequence, leader.Err())
	}
	if e, err := kv.Get(ctx(t), fenced.KVKey("acct.2")); err != nil || string(e.Value()) != "110" {
		t.Errorf("acct.2 after the stale batch = %v, %v; want 110", e, err)
	}
	if _, err := kv.Get(ctx(t), fenced.KVKey("acct.1")); !errors.Is(err, jetstream.ErrKeyDeleted) && !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Errorf("acct.1 after the stale batch: %v, want still deleted", err)
	}
}

// On an R3 bucket, commits racing the leader's renewals all succeed.
func TestStateJSClusterCommitRacesRenewals(t *testing.T) {
	t.Parallel()
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
		if _, err := leader.State().Commit(ctx(t), state.Write{Key: "a", Value: v}, state.Write{Key: "b", Value: v}); err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
	}
	for _, n := range nodes {
		a, err1 := n.State().Get(ctx(t), "a")
		b, err2 := n.State().Get(ctx(t), "b")
		if err1 != nil || err2 != nil || string(a.Value) != string(b.Value) {
			t.Errorf("%s: a = %q (%v), b = %q (%v)", n.Config().NodeID, a.Value, err1, b.Value, err2)
		}
	}
	rec.check(t)
}

func TestStateCommitPreconditions(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	nodes := startNodes(t, srv, rec, id, "a", "b")
	leader := waitOneLeader(t, nodes, 5*time.Second)
	if err := leader.State().EnableCommit(ctx(t)); err != nil {
		t.Fatal(err)
	}
	commitPreconditions(t, leader, without(nodes, leader)[0])
	rec.check(t)
}

// On an R3 bucket, through a stream leader that may be on another server
// than the node's.
func TestStateJSClusterCommitPreconditions(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	c := natstest.RunCluster(t, 3)
	rec := newRecorder()
	id := uniqueClusterID(t)
	nodes := startClusterNodes(t, c, id, rec, 2)
	leader := waitOneLeader(t, nodes, 10*time.Second)
	if err := leader.State().EnableCommit(ctx(t)); err != nil {
		t.Fatal(err)
	}
	commitPreconditions(t, leader, without(nodes, leader)[0])
	rec.check(t)
}

// commitPreconditions runs Commits with per-key preconditions on leader
// (its bucket allowing commits) and reads the outcome back through reader
// and the bucket stream's leader.
func commitPreconditions(t *testing.T, leader, reader *Node) {
	t.Helper()
	st := leader.State()
	get := func(key string) state.Entry {
		t.Helper()
		e, err := reader.State().Get(ctx(t), key)
		if err != nil {
			t.Fatalf("Get(%s): %v", key, err)
		}
		return e
	}
	r1, err := st.Put(ctx(t), "acct.1", []byte("100"))
	if err != nil {
		t.Fatal(err)
	}

	// Preconditions that hold: a revision, no value; the write without
	// one carries the lease check.
	if _, err := st.Commit(ctx(t),
		state.Write{Key: "acct.1", Value: []byte("90"), Expect: state.ExpectRevision(r1)},
		state.Write{Key: "acct.2", Value: []byte("10"), Expect: state.ExpectAbsent()},
		state.Write{Key: "log.1", Value: []byte("1->2:10")}); err != nil {
		t.Fatalf("Commit whose preconditions hold: %v", err)
	}
	a1, a2 := get("acct.1"), get("acct.2")
	if string(a1.Value) != "90" || string(a2.Value) != "10" || string(get("log.1").Value) != "1->2:10" {
		t.Fatalf("after the commit: acct.1 = %q, acct.2 = %q", a1.Value, a2.Value)
	}

	// One precondition fails: nothing of the batch is stored.
	conflicts := []struct {
		name   string
		key    string // the key the error names
		writes []state.Write
	}{
		{"one stale revision among writes without", "acct.1", []state.Write{
			{Key: "acct.2", Value: []byte("0"), Expect: state.ExpectRevision(a2.Revision)},
			{Key: "acct.1", Value: []byte("200"), Expect: state.ExpectRevision(r1)},
			{Key: "log.2", Value: []byte("1->2:100")}}},
		{"every write with a precondition, the last stale", "acct.2", []state.Write{
			{Key: "acct.1", Value: []byte("80"), Expect: state.ExpectRevision(a1.Revision)},
			{Key: "acct.2", Value: []byte("20"), Expect: state.ExpectRevision(r1)}}},
		{"a deletion expecting a revision of a key never written", "acct.3", []state.Write{
			{Key: "acct.3", Delete: true, Expect: state.ExpectRevision(a1.Revision)},
			{Key: "log.2", Value: []byte("x")}}},
		{"no value expected of a key that has one", "acct.1", []state.Write{
			{Key: "acct.1", Value: []byte("0"), Expect: state.ExpectAbsent()},
			{Key: "log.2", Value: []byte("x")}}},
		{"revision 0 expected of a key that has one", "acct.2", []state.Write{
			{Key: "acct.2", Value: []byte("0"), Expect: state.ExpectRevision(0)}}},
	}
	for _, c := range conflicts {
		before := streamLastSeq(t, leader)
		_, err := st.Commit(ctx(t), c.writes...)
		if !errors.Is(err, state.ErrConflict) || errors.Is(err, state.ErrFenced) || errors.Is(err, ErrNotLeader) ||
			!strings.Contains(err.Error(), strconv.Quote(c.key)) {
			t.Errorf("%s: Commit = %v, want state.ErrConflict naming %q", c.name, err, c.key)
		}
		if m := storedSince(t, leader, before); len(m) > 0 {
			t.Errorf("%s: the refused commit stored %d messages, first %s", c.name, len(m), m[0])
		}
	}
	if !leader.IsLeader() {
		t.Fatal("the leader lost its lease to conflicts")
	}
	if e := get("acct.1"); e.Revision != a1.Revision {
		t.Errorf("acct.1 moved to %d after refused commits", e.Revision)
	}

	// Every write with a precondition, all holding, a deletion among them:
	// the lease check rides on a marker of its own, stored with them.
	rev, err := st.Commit(ctx(t),
		state.Write{Key: "acct.1", Value: []byte("80"), Expect: state.ExpectRevision(a1.Revision)},
		state.Write{Key: "acct.2", Delete: true, Expect: state.ExpectRevision(a2.Revision)})
	if err != nil {
		t.Fatalf("Commit with every precondition holding: %v", err)
	}
	if e := get("acct.1"); string(e.Value) != "80" || e.Revision != rev-1 {
		t.Errorf("acct.1 = %+v, want 80 at revision %d", e, rev-1)
	}
	if _, err := reader.State().Get(ctx(t), "acct.2"); !errors.Is(err, state.ErrKeyNotFound) {
		t.Errorf("acct.2 after its conditional deletion: %v, want state.ErrKeyNotFound", err)
	}
	stl, _ := stateStore(leader)
	if m, err := fenced.LastRecord(ctx(t), stl, fenced.KVKey("acct.2"), time.Second); err != nil || m.Revision != rev || !m.Deleted {
		t.Errorf("acct.2's deletion = %+v, %v; want one at the revision returned, %d", m, err, rev)
	}
	if m, err := fenced.LastRecord(ctx(t), stl, fenced.CommitFenceKey, time.Second); err != nil || m.Revision != rev+1 || !m.Deleted {
		t.Errorf("lease-check marker = %+v, %v; want a deletion at %d", m, err, rev+1)
	}
	// A deleted key has no value: a compare-and-set of one key creates it.
	rev, err = st.Commit(ctx(t), state.Write{Key: "acct.2", Value: []byte("5"), Expect: state.ExpectAbsent()})
	if err != nil {
		t.Fatalf("create of a deleted key: %v", err)
	}
	if e := get("acct.2"); string(e.Value) != "5" || e.Revision != rev || e.Epoch != leader.Epoch() {
		t.Errorf("acct.2 = %+v, want 5 at %d, epoch %d", e, rev, leader.Epoch())
	}
	// The revision returned chains the next compare-and-set.
	if _, err := st.Commit(ctx(t), state.Write{Key: "acct.2", Value: []byte("6"), Expect: state.ExpectRevision(rev)}); err != nil {
		t.Errorf("compare-and-set on the revision returned: %v", err)
	}
}

// streamLastSeq is the last sequence of n's bucket stream, from its leader.
func streamLastSeq(t *testing.T, n *Node) uint64 {
	t.Helper()
	st, err := stateStore(n)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.JetStream().Stream(ctx(t), wire.KVStream(st.Bucket()))
	if err != nil {
		t.Fatal(err)
	}
	return info.CachedInfo().State.LastSeq
}

// storedSince returns the subjects of the messages after seq in n's
// bucket stream, but the lease's, read from the stream's leader (which
// stores a batch before any replica acknowledges it).
func storedSince(t *testing.T, n *Node, seq uint64) []string {
	t.Helper()
	st, err := stateStore(n)
	if err != nil {
		t.Fatal(err)
	}
	last := streamLastSeq(t, n)
	var out []string
	for s := seq + 1; s <= last; s++ {
		req := []byte(`{"seq":` + strconv.FormatUint(s, 10) + `}`)
		reply, err := st.Conn().RequestWithContext(ctx(t), "$JS.API.STREAM.MSG.GET."+wire.KVStream(st.Bucket()), req)
		if err != nil {
			t.Fatal(err)
		}
		var resp fenced.MsgGetResponse
		if err := json.Unmarshal(reply.Data, &resp); err != nil {
			t.Fatal(err)
		}
		if resp.Message != nil && resp.Message.Subject != wire.KVSubject(st.Bucket(), wire.LeaseKey) {
			out = append(out, fmt.Sprintf("%s at %d", resp.Message.Subject, s))
		}
	}
	return out
}

func TestErrStateConflictWording(t *testing.T) {
	t.Parallel()
	conflict := fmt.Errorf("state commit: %w", state.ErrConflict) // as a caller gets it
	for _, other := range []error{state.ErrFenced, state.ErrInvalidKey, state.ErrKeyNotFound, ErrNotLeader, ErrBucketConfig} {
		if state.ErrConflict.Error() == other.Error() || errors.Is(conflict, other) {
			t.Errorf("state.ErrConflict is worded as, or wraps, %v", other)
		}
	}
	if !strings.HasPrefix(state.ErrConflict.Error(), "cluster: ") {
		t.Errorf("%q does not start with \"cluster: \"", state.ErrConflict)
	}
}
