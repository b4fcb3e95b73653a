package cluster

import (
	"context"
	"errors"
	"fmt"
	"github.com/ozanturksever/go-cluster/state"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// busyWriters keeps whichever node leads writing state (Puts and 2-key
// Commits) on three goroutines until stop is called. A replicated stream
// refuses a write checked on the lease subject while another such write
// is in flight (code 10164), so a release sent while these are in flight
// is refused without being compared.
func busyWriters(t *testing.T, nodes []*Node) (stop func()) {
	t.Helper()
	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				var leader *Node
				for _, n := range nodes {
					if n.IsLeader() {
						leader = n
					}
				}
				if leader == nil {
					runtime.Gosched()
					continue
				}
				c, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				var err error
				if w == 2 {
					_, err = leader.State().Commit(c,
						state.Write{Key: "busy.c1", Value: []byte(strconv.Itoa(i))},
						state.Write{Key: "busy.c2", Value: []byte(strconv.Itoa(i))})
				} else {
					_, err = leader.State().Put(c, fmt.Sprintf("busy.p%d", w), []byte(strconv.Itoa(i)))
				}
				cancel()
				if err != nil && !errors.Is(err, ErrNotLeader) && !errors.Is(err, state.ErrWriteUncertain) &&
					!errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("writer %d: %v", w, err)
					return
				}
			}
		})
	}
	var once sync.Once
	return func() { once.Do(func() { close(done); wg.Wait() }) }
}

// leaseNow reads the lease record from the bucket.
func leaseNow(t *testing.T, js jetstream.JetStream, clusterID string) (Lease, uint64) {
	t.Helper()
	kv, err := js.KeyValue(ctx(t), wire.BucketName(clusterID))
	if err != nil {
		t.Fatal(err)
	}
	e, err := kv.Get(ctx(t), wire.LeaseKey)
	if err != nil {
		t.Fatal(err)
	}
	l, err := decodeLease(e.Value(), e.Revision())
	if err != nil {
		t.Fatalf("lease at %d: %v", e.Revision(), err)
	}
	return l, e.Revision()
}

// A leader busy writing state on an R3 bucket hands over at once, every
// time: StepDown returns nil and a follower leads well inside a LeaseTTL,
// StepDownTo hands over to the node it names, and Stop releases the
// lease. On main before the fix the release met 10164 (a state write
// checked on the lease in flight), was not retried, and StepDown returned
// the API error while the successor waited the lease out.
func TestStateJSClusterBusyLeaderHandsOver(t *testing.T) {
	// Runs alone: its leader is kept busy on purpose and must still hand over; other tests' load on top would make it miss.
	natstest.CheckLeaks(t)
	c := natstest.RunCluster(t, 3)
	rec := newRecorder()
	id := uniqueClusterID(t)
	var nodes []*Node
	for i := range 3 {
		cfg := clusterConfig(c, id, fmt.Sprintf("n%d", i))
		// A long LeaseTTL: a successor that had to wait the lease out
		// would lead no sooner than 4.5s after the StepDown (a LeaseTTL
		// after a renewal at most 1.5s before it), past the 3s wait
		// below; no longer, since the bucket's first election waits it
		// out once (rule 16) while the test runs alone.
		cfg.LeaseTTL, cfg.RenewInterval = 6*time.Second, 1500*time.Millisecond
		cfg.Cooldown = 500 * time.Millisecond
		nodes = append(nodes, startNode(t, cfg, rec, nil))
	}
	js := rawJS(t, c.URLs()...)
	// The first election of a new bucket waits one LeaseTTL (rule 16).
	leader := waitOneLeader(t, nodes, 30*time.Second)
	if err := leader.State().EnableCommit(ctx(t)); err != nil {
		t.Fatal(err)
	}
	stop := busyWriters(t, nodes)
	defer stop()

	handedOver := func(what string, from *Node, epoch int64) *Node {
		t.Helper()
		var next *Node
		natstest.WaitFor(t, 3*time.Second, func() bool {
			for _, n := range nodes {
				if n != from && n.IsLeader() && n.Epoch() > epoch {
					next = n
					return true
				}
			}
			return false
		}, "%s: no follower led within 3s (LeaseTTL 6s): the release did not land", what)
		return next
	}
	for round := range 2 {
		epoch := leader.Epoch()
		if err := leader.StepDown(ctx(t)); err != nil {
			t.Fatalf("round %d: StepDown by a busy leader: %v", round, err)
		}
		leader = handedOver("StepDown", leader, epoch)

		epoch = leader.Epoch()
		var to *Node
		for _, n := range nodes {
			if n != leader {
				to = n
			}
		}
		natstest.WaitFor(t, 5*time.Second, func() bool { return to.Leader() == leader.Config().NodeID }, "named node did not see the leader")
		if err := leader.StepDownTo(ctx(t), to.Config().NodeID); err != nil {
			t.Fatalf("round %d: StepDownTo(%s) by a busy leader: %v", round, to.Config().NodeID, err)
		}
		if next := handedOver("StepDownTo", leader, epoch); next != to {
			t.Fatalf("round %d: StepDownTo(%s) handed over to %s", round, to.Config().NodeID, next.Config().NodeID)
		}
		leader = to
	}

	epoch := leader.Epoch()
	if err := leader.Stop(ctx(t)); err != nil {
		t.Fatalf("Stop by a busy leader: %v", err)
	}
	l, rev := leaseNow(t, js, id)
	if l.Epoch == epoch && l.NodeID == leader.Config().NodeID {
		t.Fatalf("after Stop the lease at %d still holds %s at epoch %d: the release did not land", rev, l.NodeID, l.Epoch)
	}
	handedOver("Stop", leader, epoch)
	stop()
	rec.check(t)
}
