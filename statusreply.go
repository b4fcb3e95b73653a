package cluster

// The built-in status request: every node, with no wiring, answers what it
// knows on a subject of its own and on a cluster-wide one. The answer is
// read from the node's view; no KV request is made for it.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"github.com/nats-io/nats.go"
)

// StatusSubject is where node nodeID of cluster clusterID answers status
// requests: "cluster.<ClusterID>.status.<NodeIDToken(nodeID)>". Any NATS
// client may send a request there (empty payload); the reply is a
// StatusReply in JSON. The health package answers on
// "cluster.<ClusterID>.health…", so the two never meet.
func StatusSubject(clusterID, nodeID string) string {
	return ClusterStatusSubject(clusterID) + "." + NodeIDToken(nodeID)
}

// ClusterStatusSubject is where every running node of cluster clusterID
// answers status requests: "cluster.<ClusterID>.status". A request there
// with a reply inbox collects one StatusReply per running node
// (scatter-gather), as `go-cluster status` does.
func ClusterStatusSubject(clusterID string) string { return "cluster." + clusterID + ".status" }

// Roles of a StatusReply.
const (
	StatusLeader   = "leader"    // holds a live tenure
	StatusFollower = "follower"  // campaigns when the lease is free
	StatusObserver = "observer"  // made by NewObserver: never campaigns
	StatusNotReady = "not ready" // its ReadinessCheck fails: it does not campaign
)

// StatusReply is a node's answer to a status request: its own view.
type StatusReply struct {
	Node string `json:"node"`
	// Role is StatusLeader, StatusFollower, StatusObserver or StatusNotReady.
	Role string `json:"role"`
	// Leader and Epoch are the leader and epoch the node knows
	// (Node.Leader, Node.Epoch).
	Leader string `json:"leader,omitempty"`
	Epoch  int64  `json:"epoch,omitempty"`
	// NotReady is Node.Ready's error, when the node is not ready.
	NotReady string `json:"not_ready,omitempty"`
	// Metadata is the node's Config.Metadata.
	Metadata map[string]string `json:"metadata,omitempty"`
	// StartedAt is when the node started, by its own wall clock.
	StartedAt time.Time `json:"started_at"`
	// Instance names the process (Lease.Instance): two replies for one
	// NodeID with two instances are two processes given the same NodeID.
	Instance string `json:"instance,omitempty"`
}

// status is the node's StatusReply, read from its view.
func (n *Node) status(startedAt time.Time) StatusReply {
	r := StatusReply{Node: n.cfg.NodeID, Metadata: maps.Clone(n.cfg.Metadata), StartedAt: startedAt.UTC(), Instance: n.instance}
	leading := n.IsLeader()
	v := n.view.Snapshot()
	r.Leader, r.Epoch = v.Leader, v.Epoch
	ready := v.Ready
	if ready != nil {
		r.NotReady = ready.Error()
	}
	switch {
	case !n.campaign:
		r.Role = StatusObserver
	case leading:
		r.Role = StatusLeader
	case ready != nil:
		r.Role = StatusNotReady
	default:
		r.Role = StatusFollower
	}
	return r
}

// refuseDuplicate asks this node's own status subject before it answers
// there: a reply from another instance is another running process with
// this NodeID (E14 in docs/design.md). With nobody subscribed the server says "no
// responders" at once, so a normal start costs one round trip. A node
// that does not answer (stuck, or older than StatusReply) is not seen
// here; the lease check of P9 remains.
func (n *Node) refuseDuplicate(ctx context.Context, nc *nats.Conn) error {
	if !n.campaign {
		return nil // an observer writes nothing: a twin costs nothing
	}
	ctx, cancel := context.WithTimeout(ctx, min(n.cfg.RequestTimeout, time.Second))
	defer cancel()
	msg, err := nc.RequestWithContext(ctx, StatusSubject(n.cfg.ClusterID, n.cfg.NodeID), nil)
	if err != nil {
		return nil // no responders, or no answer in time: nobody we can see
	}
	var r StatusReply
	if json.Unmarshal(msg.Data, &r) != nil || r.Node != n.cfg.NodeID || r.Instance == "" || r.Instance == n.instance {
		return nil
	}
	return fmt.Errorf("%w: %q already runs in another process (instance %s, started %s)",
		ErrDuplicateNodeID, n.cfg.NodeID, r.Instance, r.StartedAt.Format(time.RFC3339))
}

// subscribeStatus answers status requests on the node's subject and the
// cluster's. The callback only reads the view and publishes the reply.
func (n *Node) subscribeStatus(nc *nats.Conn, startedAt time.Time) ([]*nats.Subscription, error) {
	answer := func(m *nats.Msg) {
		if m.Reply == "" {
			return
		}
		data, _ := json.Marshal(n.status(startedAt)) // a StatusReply always encodes
		_ = m.Respond(data)
	}
	var subs []*nats.Subscription
	for _, subject := range []string{StatusSubject(n.cfg.ClusterID, n.cfg.NodeID), ClusterStatusSubject(n.cfg.ClusterID)} {
		sub, err := nc.Subscribe(subject, answer)
		if err != nil {
			for _, s := range subs {
				_ = s.Unsubscribe()
			}
			return nil, fmt.Errorf("subscribe %s: %w", subject, err)
		}
		subs = append(subs, sub)
	}
	return subs, nil
}
