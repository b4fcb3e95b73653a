package cluster

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/faultproxy"
	"github.com/ozanturksever/go-cluster/internal/fenced"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// On an R3 bucket: the leader's writes land with its epoch and every node
// reads them back; a follower's are refused; writes racing renewals (and
// each other, which a replicated stream refuses while one is in flight)
// succeed.
func TestStateJSClusterPutGetAndRenewals(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	c := natstest.RunCluster(t, 3)
	rec := newRecorder()
	id := uniqueClusterID(t)
	nodes := startClusterNodes(t, c, id, rec, 3)
	leader := waitOneLeader(t, nodes, 10*time.Second)
	rev, err := leader.State().Put(ctx(t), "k", []byte("v"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		e, err := n.State().Get(ctx(t), "k")
		if err != nil || string(e.Value) != "v" || e.Revision != rev || e.Epoch != leader.Epoch() {
			t.Errorf("%s Get = %+v, %v; want v at %d, epoch %d", n.Config().NodeID, e, err, rev, leader.Epoch())
		}
		if n != leader {
			if _, err := n.State().Put(ctx(t), "k", nil); !errors.Is(err, ErrNotLeader) {
				t.Errorf("%s (follower) Put = %v, want ErrNotLeader", n.Config().NodeID, err)
			}
		}
	}
	raceRenewals(t, leader, c.URLs()[0])
	rec.check(t)
}

// A leader cut off from the cluster past its deadline: once it has lost
// the lease, every write it tries is refused, before and after the
// partition heals, and none of its epoch lands after the successor's
// acquisition.
func TestStateJSClusterDeposedLeaderIsFenced(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	c := natstest.RunCluster(t, 3)
	rec := newRecorder()
	id := uniqueClusterID(t)
	proxy := faultproxy.New(t, c.Server(0).Addr())
	acfg := clusterConfig(c, id, "a")
	acfg.NATSURLs = []string{proxy.URL()}
	a := startNode(t, acfg, rec, nil)
	waitOneLeader(t, []*Node{a}, 10*time.Second)
	others := []*Node{
		startNode(t, clusterConfig(c, id, "b"), rec, nil),
		startNode(t, clusterConfig(c, id, "x"), rec, nil),
	}
	natstest.WaitFor(t, 5*time.Second, func() bool { return others[0].Leader() == "a" && others[1].Leader() == "a" }, "followers did not see a")
	oldEpoch := a.Epoch()
	if _, err := a.State().Put(ctx(t), "owner", []byte("a")); err != nil {
		t.Fatal(err)
	}

	proxy.Blackhole()
	natstest.WaitFor(t, 10*time.Second, func() bool { return !a.IsLeader() }, "partitioned leader did not demote")
	if _, err := a.State().Put(ctx(t), "owner", []byte("a-cut-off")); !errors.Is(err, ErrNotLeader) {
		t.Errorf("cut-off leader Put = %v, want ErrNotLeader", err)
	}
	successor := waitOneLeader(t, others, 10*time.Second)
	if _, err := successor.State().Put(ctx(t), "owner", []byte(successor.Config().NodeID)); err != nil {
		t.Fatal(err)
	}
	proxy.Restore()
	natstest.WaitFor(t, 15*time.Second, func() bool { return a.Leader() == successor.Config().NodeID }, "a did not rejoin as follower")
	if _, err := a.State().Put(ctx(t), "owner", []byte("a-again")); !errors.Is(err, ErrNotLeader) {
		t.Errorf("deposed leader Put = %v, want ErrNotLeader", err)
	}
	e, err := a.State().Get(ctx(t), "owner")
	if err != nil || string(e.Value) != successor.Config().NodeID || e.Epoch != successor.Epoch() {
		t.Errorf("Get on a = %+v, %v; want %s's value at epoch %d", e, err, successor.Config().NodeID, successor.Epoch())
	}
	for _, m := range stateMsgs(t, rawJS(t, c.URLs()[0]), id) {
		if m.Header.Get(fenced.EpochHeader) == strconv.FormatInt(oldEpoch, 10) && string(m.Data) != "a" {
			t.Errorf("a write of the deposed tenure landed: %q at %d", m.Data, m.Sequence)
		}
	}
	rec.check(t)
}

// A leader writing state without pause keeps its lease. A replicated
// stream refuses a check on the lease subject while a state write fenced
// on it is in flight (and the other way round); renewals that met such a
// refusal were retried only a quarter RenewInterval later, and a busy
// leader lost its lease to its own writes.
func TestStateJSClusterBusyLeaderKeepsLease(t *testing.T) {
	// Runs alone: its leader is kept busy on purpose and must keep its lease; other tests' load on top would take it.
	natstest.CheckLeaks(t)
	c := natstest.RunCluster(t, 3)
	rec := newRecorder()
	id := uniqueClusterID(t)
	nodes := startClusterNodes(t, c, id, rec, 2)
	leader := waitOneLeader(t, nodes, 10*time.Second)
	epoch := leader.Epoch()
	until := time.Now().Add(4 * clusterConfig(c, id, "x").LeaseTTL)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Go(func() {
			for i := 0; time.Now().Before(until); i++ {
				if _, err := leader.State().Put(ctx(t), fmt.Sprintf("busy%d", w), []byte(strconv.Itoa(i))); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("Put by a busy leader: %v", err)
	}
	if !leader.IsLeader() || leader.Epoch() != epoch {
		t.Errorf("the busy leader lost its lease: leading %v at epoch %d, was %d", leader.IsLeader(), leader.Epoch(), epoch)
	}
	rec.check(t)
}

// The bucket stream's leader server dies right after acknowledging the
// leader's Put, and the leadership moves: the next tenure reads that
// write. An R3 stream acknowledges a write once a majority stores it, and
// only a server holding every acknowledged write can become the stream's
// leader, which is the one server Get asks. The next tenure may be the
// node that stepped down: a follower whose watch stalls while the stream
// moves sees the release late, and the design lets the node that stepped
// down win again once its cooldown ends (docs/design.md §4.4).
func TestStateJSClusterSuccessorReadsLastWriteAfterStreamLeaderDies(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	c := natstest.RunCluster(t, 3)
	rec := newRecorder()
	id := uniqueClusterID(t)
	nodes := startClusterNodes(t, c, id, rec, 3)
	leader := waitOneLeader(t, nodes, 10*time.Second)
	stream := wire.KVStream(wire.BucketName(id))
	dead := c.WaitForStreamLeader(t, "$G", stream, 10*time.Second)
	for i := range 20 { // a history, so that a stale replica would show an older value
		if _, err := leader.State().Put(ctx(t), "owner", []byte("v"+strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	rev, err := leader.State().Put(ctx(t), "owner", []byte("last"))
	if err != nil {
		t.Fatal(err)
	}
	c.Shutdown(dead)
	epoch := leader.Epoch()
	if err := leader.StepDown(ctx(t)); err != nil {
		// The release may meet the stream without a leader; the lease
		// then expires instead.
		t.Logf("StepDown while the stream elects a leader: %v", err)
	}
	var successor *Node
	natstest.WaitFor(t, 20*time.Second, func() bool {
		successor = nil
		for _, n := range nodes {
			if n.IsLeader() && n.Epoch() > epoch {
				successor = n
			}
		}
		return successor != nil
	}, "no tenure after the stream leader's server died")
	if now := c.StreamLeader("$G", stream); now == dead {
		t.Fatalf("stream leader still n%d", dead)
	}
	e, err := successor.State().Get(ctx(t), "owner")
	if err != nil || string(e.Value) != "last" || e.Revision != rev || e.Epoch != epoch {
		t.Fatalf("successor %s Get = %+v, %v; want the predecessor's last write at %d, epoch %d",
			successor.Config().NodeID, e, err, rev, epoch)
	}
	next, err := successor.State().Put(ctx(t), "owner", []byte(successor.Config().NodeID))
	if err != nil || next <= rev {
		t.Errorf("successor Put = %d, %v; want a revision after %d", next, err, rev)
	}
	rec.check(t)
}
