package cluster_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/health"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// TestNewNodeAcceptsHostName: README tells users to use the host name as
// the NodeID, so a dotted host name must be accepted. (It failed before
// NodeIDs could hold dots: "NodeID "db1.example.com" has character '.'".)
func TestNewNodeAcceptsHostName(t *testing.T) {
	t.Parallel()
	for _, id := range []string{"db1.example.com", "db1", "ip-10-0-0-1.eu-west-1.compute.internal", "node_1.rack-2", strings.Repeat("a.", 126) + "a"} {
		cfg := cluster.Config{ClusterID: "orders", NodeID: id, NATSURLs: []string{"nats://127.0.0.1:4222"}}
		if _, err := cluster.NewNode(cfg, nil); err != nil {
			t.Errorf("NewNode(NodeID %q) = %v, want accepted", id, err)
		}
	}
}

// hostNode is one node named after a host, with its health checker.
type hostNode struct {
	node    *cluster.Node
	checker *health.Checker
}

func startHostNode(t *testing.T, url, clusterID, nodeID string) hostNode {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	checker, err := health.NewChecker(health.Config{ClusterID: clusterID, NodeID: nodeID, NATSURLs: []string{url}, Logger: logger})
	if err != nil {
		t.Fatalf("NewChecker(%s): %v", nodeID, err)
	}
	adapter := health.NewAdapter(checker)
	node, err := cluster.NewNode(cluster.Config{
		ClusterID: clusterID, NodeID: nodeID, NATSURLs: []string{url},
		LeaseTTL: 3 * time.Second, RenewInterval: 750 * time.Millisecond, Logger: logger,
	}, adapter)
	if err != nil {
		t.Fatalf("NewNode(%s): %v", nodeID, err)
	}
	if err := adapter.Bind(node); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := checker.Start(ctx); err != nil {
		t.Fatalf("checker %s: %v", nodeID, err)
	}
	t.Cleanup(checker.Stop)
	if err := node.Start(ctx); err != nil {
		t.Fatalf("Start(%s): %v", nodeID, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := node.Stop(ctx); err != nil {
			t.Errorf("Stop(%s): %v", nodeID, err)
		}
	})
	return hostNode{node: node, checker: checker}
}

// waitLeader waits until want leads and both nodes say so.
func waitLeader(t *testing.T, nodes []hostNode, want string) {
	t.Helper()
	natstest.WaitFor(t, 10*time.Second, func() bool {
		for _, n := range nodes {
			if n.node.Leader() != want || n.node.IsLeader() != (n.node.Config().NodeID == want) {
				return false
			}
		}
		return true
	}, "%s did not become the agreed leader", want)
}

// TestHostNameNodesEndToEnd runs two nodes named after hosts on an
// embedded server: they elect, StepDownTo hands over to a dotted NodeID,
// the node's control and health subjects answer, the cooldown key is
// written under the NodeID's token, and the lease record carries the
// NodeIDs as they are.
func TestHostNameNodesEndToEnd(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	const clusterID = "hosts"
	ids := []string{"db1.example.com", "db2.example.com"}
	nodes := []hostNode{startHostNode(t, srv.URL(), clusterID, ids[0]), startHostNode(t, srv.URL(), clusterID, ids[1])}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	var leader, follower hostNode
	natstest.WaitFor(t, 10*time.Second, func() bool {
		for i, n := range nodes {
			if n.node.IsLeader() && nodes[1-i].node.Leader() == n.node.Config().NodeID {
				leader, follower = n, nodes[1-i]
				return true
			}
		}
		return false
	}, "no agreed leader")
	from, to := leader.node.Config().NodeID, follower.node.Config().NodeID

	// StepDownTo names the dotted successor, which takes the lease.
	if err := leader.node.StepDownTo(ctx, to); err != nil {
		t.Fatalf("StepDownTo(%s): %v", to, err)
	}
	waitLeader(t, nodes, to)

	nc := srv.Connect(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, wire.BucketName(clusterID))
	if err != nil {
		t.Fatal(err)
	}
	// The cooldown key is the NodeID's token; its record names the NodeID.
	var cooldown jetstream.KeyValueEntry
	natstest.WaitFor(t, 5*time.Second, func() bool {
		cooldown, err = kv.Get(ctx, "cooldown-"+strings.ReplaceAll(from, ".", "="))
		return err == nil
	}, "no cooldown key for %s: %v", from, err)
	var rec struct {
		NodeID string `json:"node_id"`
	}
	if err := json.Unmarshal(cooldown.Value(), &rec); err != nil || rec.NodeID != from {
		t.Errorf("cooldown record %s: node_id %q (%v), want %q", cooldown.Value(), rec.NodeID, err, from)
	}
	// The lease record carries the NodeID as it is, and decodes.
	entry, err := kv.Get(ctx, wire.LeaseKey)
	if err != nil {
		t.Fatal(err)
	}
	if l, err := wire.DecodeLease(entry.Value(), entry.Revision()); err != nil || l.NodeID != to {
		t.Errorf("lease %s: %+v, %v; want held by %s", entry.Value(), l, err, to)
	}

	// The former leader's own control subject answers: it does not lead
	// and names the leader.
	ask := func(subject string, req wire.StepDownRequest) wire.StepDownReply {
		t.Helper()
		data, _ := json.Marshal(req)
		m, err := nc.RequestWithContext(ctx, subject, data)
		if err != nil {
			t.Fatalf("request on %s: %v", subject, err)
		}
		var r wire.StepDownReply
		if err := json.Unmarshal(m.Data, &r); err != nil {
			t.Fatalf("reply %q: %v", m.Data, err)
		}
		return r
	}
	subject := "cluster." + clusterID + ".control." + strings.ReplaceAll(from, ".", "=") + ".stepdown"
	if r := ask(subject, wire.StepDownRequest{}); r.OK || r.Node != from || r.Leader != to {
		t.Errorf("reply of %s on %s: %+v, want a refusal naming leader %s", from, subject, r, to)
	}
	// Remote handover back to the dotted NodeID, on the leader's own subject.
	if r := ask(wire.NodeControlSubject(clusterID, to), wire.StepDownRequest{To: from}); !r.OK || r.Node != to || r.To != from {
		t.Fatalf("remote step-down to %s: %+v", from, r)
	}
	waitLeader(t, nodes, from)

	// Health: the client, and a raw request on the documented subject (as
	// the NATS CLI sends it).
	client, err := health.NewClient(nc, clusterID)
	if err != nil {
		t.Fatal(err)
	}
	// The checker learns of the handover from the hooks, which run after
	// the node's own state changed: its answers catch up.
	for _, id := range ids {
		var r health.Response
		natstest.WaitFor(t, 5*time.Second, func() bool {
			if r, err = client.QueryNode(ctx, id, 5*time.Second); err != nil {
				r = health.Response{Error: err.Error()}
			}
			return err == nil && r.NodeID == id && r.Leader == from && r.IsLeader() == (id == from)
		}, "QueryNode(%s) last answered %+v; want leader %s", id, &r, from)
	}
	m, err := nc.RequestWithContext(ctx, "cluster."+clusterID+".health."+strings.ReplaceAll(to, ".", "="), nil)
	if err != nil {
		t.Fatalf("raw health request: %v", err)
	}
	var r health.Response
	if err := json.Unmarshal(m.Data, &r); err != nil || r.NodeID != to {
		t.Errorf("raw health reply %s (%v), want node %s", m.Data, err, to)
	}
	// Nothing answers on the dotted name split into tokens.
	if _, err := nc.Request("cluster."+clusterID+".health."+to, nil, 200*time.Millisecond); !errors.Is(err, nats.ErrNoResponders) {
		t.Errorf("request on the dotted subject: %v, want no responders", err)
	}
}
