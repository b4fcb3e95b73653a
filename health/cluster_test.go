package health

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/ozanturksever/go-cluster/internal/natstest"
)

func TestQueryClusterOfFive(t *testing.T) {
	natstest.CheckLeaks(t)
	srv := runServer(t)

	var want []string
	for i := 1; i <= 5; i++ {
		id := fmt.Sprintf("n%d", i)
		c := startChecker(t, srv.Connect(t), "orders", id)
		if i == 3 {
			c.SetRole("PRIMARY")
		}
		c.SetLeader("n3")
		want = append(want, id)
	}
	// Nodes of other clusters, one of them with a NodeID that also exists in
	// "orders", and a cluster whose ID starts like "orders": never included.
	startChecker(t, srv.Connect(t), "billing", "n1")
	startChecker(t, srv.Connect(t), "billing", "b2")
	startChecker(t, srv.Connect(t), "orders2", "n6")

	// An operator's client: no NodeID, no node IDs known in advance.
	cl := newTestClient(t, srv.Connect(t), "orders")

	t.Run("until timeout", func(t *testing.T) {
		rs, err := cl.QueryCluster(testCtx(t, 10*time.Second), 500*time.Millisecond)
		if err != nil {
			t.Fatalf("QueryCluster: %v", err)
		}
		if got := nodeIDs(rs); !slices.Equal(got, want) {
			t.Fatalf("nodes = %v, want %v", got, want)
		}
		var leaders []string
		for _, r := range rs {
			if r.IsLeader() {
				leaders = append(leaders, r.NodeID)
			}
			if r.Leader != "n3" || r.Error != "" {
				t.Errorf("response %+v", r)
			}
		}
		if !slices.Equal(leaders, []string{"n3"}) {
			t.Errorf("leaders = %v, want [n3]", leaders)
		}
	})

	t.Run("stops at n replies", func(t *testing.T) {
		start := time.Now()
		rs, err := cl.QueryClusterN(testCtx(t, 10*time.Second), 5, 5*time.Second)
		if err != nil {
			t.Fatalf("QueryClusterN: %v", err)
		}
		if got := nodeIDs(rs); !slices.Equal(got, want) {
			t.Fatalf("nodes = %v, want %v", got, want)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("QueryClusterN(5) took %v; it should return once 5 answered", d)
		}
	})

	t.Run("fewer than n", func(t *testing.T) {
		rs, err := cl.QueryClusterN(testCtx(t, 10*time.Second), 6, 300*time.Millisecond)
		if !errors.Is(err, ErrTimeout) {
			t.Fatalf("err = %v, want ErrTimeout", err)
		}
		if got := nodeIDs(rs); !slices.Equal(got, want) {
			t.Fatalf("partial nodes = %v, want %v", got, want)
		}
	})

	t.Run("from a checker", func(t *testing.T) {
		// A node's own Checker gathers the cluster too, itself included.
		c := startChecker(t, srv.Connect(t), "orders", "n0")
		rs, err := c.QueryClusterN(testCtx(t, 10*time.Second), 6, 5*time.Second)
		if err != nil {
			t.Fatalf("QueryClusterN: %v", err)
		}
		if got := nodeIDs(rs); !slices.Equal(got, append([]string{"n0"}, want...)) {
			t.Fatalf("nodes = %v", got)
		}
	})
}

func TestQueryClusterNoNodes(t *testing.T) {
	natstest.CheckLeaks(t)
	srv := runServer(t)
	startChecker(t, srv.Connect(t), "billing", "n1") // another cluster only
	cl := newTestClient(t, srv.Connect(t), "orders")

	start := time.Now()
	rs, err := cl.QueryCluster(testCtx(t, 30*time.Second), 10*time.Second)
	if !errors.Is(err, ErrNoResponders) || len(rs) != 0 {
		t.Fatalf("QueryCluster = %v, %v; want ErrNoResponders", rs, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v; an empty cluster should be reported at once", d)
	}
}

func TestQueryClusterIgnoresForeignReplies(t *testing.T) {
	natstest.CheckLeaks(t)
	srv := runServer(t)
	nc := srv.Connect(t)
	startChecker(t, srv.Connect(t), "orders", "n1")
	// Something else answers on the cluster subject with non-health data.
	sub, err := nc.Subscribe(ClusterSubject("orders"), func(m *nats.Msg) { _ = m.Respond([]byte("pong")) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	cl := newTestClient(t, srv.Connect(t), "orders")
	rs, err := cl.QueryCluster(testCtx(t, 10*time.Second), 300*time.Millisecond)
	if err != nil {
		t.Fatalf("QueryCluster: %v", err)
	}
	if got := nodeIDs(rs); !slices.Equal(got, []string{"n1"}) {
		t.Fatalf("nodes = %v, want [n1]", got)
	}
}
