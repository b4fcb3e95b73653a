package presence

// The built-in status request: every campaigning node, with no wiring,
// answers what it knows on a subject of its own and on a cluster-wide
// one. The answer is read from the node's view; no KV request is made
// for it.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// Self is what a node says of itself in its status replies and member
// record.
type Self struct {
	ClusterID string
	NodeID    string
	Instance  string // the process (Lease.Instance)
	Metadata  map[string]string
	StartedAt time.Time
	// ProtocolHi is the highest protocol version the node speaks; 0:
	// wire.ProtocolHi.
	ProtocolHi int
}

// View is what the node knows when it is asked.
type View struct {
	Leading bool
	Leader  string
	Epoch   int64
	Ready   error // nil when ready
}

// Reply is the node's StatusReply for its view v.
func (s Self) Reply(v View) wire.StatusReply {
	r := wire.StatusReply{Node: s.NodeID, Metadata: maps.Clone(s.Metadata), StartedAt: s.StartedAt.UTC(), Instance: s.Instance,
		Leader: v.Leader, Epoch: v.Epoch}
	if v.Ready != nil {
		r.NotReady = v.Ready.Error()
	}
	switch {
	case v.Leading:
		r.Role = wire.StatusLeader
	case v.Ready != nil:
		r.Role = wire.StatusNotReady
	default:
		r.Role = wire.StatusFollower
	}
	return r
}

// maxDuplicateWait bounds the question RefuseDuplicate asks.
const maxDuplicateWait = time.Second

// RefuseDuplicate asks the status subject of node nodeID of clusterID,
// run by process instance, before it answers there: a reply from another
// instance is another running process with
// this NodeID (E14 in docs/design.md), an error wrapping
// wire.ErrDuplicateNodeID. With nobody subscribed the server says "no
// responders" at once, so a normal start costs one round trip, bounded by
// timeout and at most a second. A node that does not answer (stuck, or
// older than StatusReply) is not seen here; the lease check of P9 remains.
func RefuseDuplicate(ctx context.Context, nc *nats.Conn, clusterID, nodeID, instance string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, min(timeout, maxDuplicateWait))
	defer cancel()
	msg, err := nc.RequestWithContext(ctx, wire.StatusSubject(clusterID, nodeID), nil)
	if err != nil {
		return nil // no responders, or no answer in time: nobody we can see
	}
	var r wire.StatusReply
	if json.Unmarshal(msg.Data, &r) != nil || r.Node != nodeID || r.Instance == "" || r.Instance == instance {
		return nil
	}
	return fmt.Errorf("%w: %q already runs in another process (instance %s, started %s)",
		wire.ErrDuplicateNodeID, nodeID, r.Instance, r.StartedAt.Format(time.RFC3339))
}

// StatusSubjects are the subjects node s answers status requests on: its
// own, then the cluster's. The node subscribes to them (in the engine,
// with its step-down subjects, read by one goroutine) and answers each
// request with Answer.
func (s Self) StatusSubjects() []string {
	return []string{wire.StatusSubject(s.ClusterID, s.NodeID), wire.ClusterStatusSubject(s.ClusterID)}
}

// Answer replies to the status request m with s's reply for the view
// view returns now; a message without a reply subject is not answered.
func (s Self) Answer(m *nats.Msg, view func() View) {
	if m.Reply == "" {
		return
	}
	data, _ := json.Marshal(s.Reply(view())) // a StatusReply always encodes
	_ = m.Respond(data)
}
