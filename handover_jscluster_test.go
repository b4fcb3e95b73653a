package cluster

import (
	"fmt"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/faultproxy"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// clusterConfig is a node config for the 3-server JetStream cluster: an R3
// bucket and a TTL with room for the cluster's own elections.
func clusterConfig(c *natstest.Cluster, clusterID, nodeID string) Config {
	cfg := testConfig(clusterID, nodeID, c.URLs()...)
	cfg.Bucket.Replicas = 3
	// 3s: three servers under -race, beside other tests on 2 cores, stall
	// a 2s leader's renewals past its deadline (seen at load 14-18).
	cfg.LeaseTTL, cfg.RenewInterval = 3*time.Second, 750*time.Millisecond
	return cfg
}

func startClusterNodes(t *testing.T, c *natstest.Cluster, id string, rec *recorder, count int) []*Node {
	var nodes []*Node
	for i := range count {
		nodes = append(nodes, startNode(t, clusterConfig(c, id, fmt.Sprintf("n%d", i)), rec, nil))
	}
	return nodes
}

func TestJSClusterElectsAndHandsOver(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	c := natstest.RunCluster(t, 3)
	rec := newRecorder()
	id := uniqueClusterID(t)
	nodes := startClusterNodes(t, c, id, rec, 3)
	first := waitOneLeader(t, nodes, 10*time.Second)
	firstEpoch := first.Epoch()
	if err := first.StepDown(ctx(t)); err != nil {
		t.Fatal(err)
	}
	second := waitOneLeader(t, without(nodes, first), 10*time.Second)
	if second.Epoch() != firstEpoch+1 {
		t.Errorf("epoch %d after %d", second.Epoch(), firstEpoch)
	}
	if err := second.Stop(ctx(t)); err != nil {
		t.Fatal(err)
	}
	waitOneLeader(t, without(nodes, second), 10*time.Second)
	rec.check(t)
}

func TestJSClusterStreamLeaderLoss(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	c := natstest.RunCluster(t, 3)
	rec := newRecorder()
	id := uniqueClusterID(t)
	nodes := startClusterNodes(t, c, id, rec, 3)
	before := waitOneLeader(t, nodes, 10*time.Second)
	stream := "KV_" + wire.BucketName(id)
	lost := c.WaitForStreamLeader(t, "$G", stream, 10*time.Second)
	c.Shutdown(lost)
	c.WaitForStreamLeader(t, "$G", stream, 15*time.Second)
	after := waitOneLeader(t, nodes, 15*time.Second)
	if after.Epoch() < before.Epoch() {
		t.Errorf("epoch went back: %d -> %d", before.Epoch(), after.Epoch())
	}
	c.Restart(t, lost)
	holdFor(t, 2*time.Second, func() bool { return len(leaders(nodes)) <= 1 }, "at most one leader after the server returns")
	waitOneLeader(t, nodes, 15*time.Second)
	rec.check(t)
}

func TestJSClusterCrashAndPartition(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	c := natstest.RunCluster(t, 3)
	rec := newRecorder()
	id := uniqueClusterID(t)
	// a reaches the cluster through a proxy to server 0 only.
	proxy := faultproxy.New(t, c.Server(0).Addr())
	acfg := clusterConfig(c, id, "a")
	acfg.NATSURLs = []string{proxy.URL()}
	a := startNode(t, acfg, rec, nil)
	waitOneLeader(t, []*Node{a}, 15*time.Second)
	others := []*Node{
		startNode(t, clusterConfig(c, id, "b"), rec, nil),
		startNode(t, clusterConfig(c, id, "x"), rec, nil),
	}
	natstest.WaitFor(t, 5*time.Second, func() bool { return others[0].Leader() == "a" && others[1].Leader() == "a" }, "followers did not see a")

	proxy.Blackhole()
	natstest.WaitFor(t, 10*time.Second, func() bool { return !a.IsLeader() }, "partitioned leader did not demote")
	successor := waitOneLeader(t, others, 10*time.Second)
	rec.check(t)
	proxy.Restore()
	natstest.WaitFor(t, 15*time.Second, func() bool { return a.Leader() == successor.Config().NodeID }, "a did not rejoin as follower")
	if want := firstEpoch(t, c.Server(0).URL(), id) + rec.tenuresBelow(successor.Epoch()); successor.Epoch() != want {
		t.Errorf("epoch = %d, want %d (the bucket's first plus one per tenure before)", successor.Epoch(), want)
	}
	rec.check(t)
}
