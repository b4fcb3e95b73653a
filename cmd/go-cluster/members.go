package main

// The members of a cluster, for status: the records the nodes announce in
// the account's bucket (wire.AccountMemberKey, wire.MemberRecord), or a
// cluster of protocol 3 in its members bucket (wire.MembersBucketName), and
// the replies to the built-in status request (wire.StatusReply) that
// every running node answers.

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ozanturksever/go-cluster/internal/store"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// stateDown is the role of a member that announced itself, did not
// withdraw (a node that stops withdraws), and did not answer in time:
// crashed, cut off, or stopped on an error.
const stateDown = "down"

// readMembers lists the announced members (store.ReadClusterMembers): in
// the account's bucket, and in the members bucket of a cluster of
// protocol 3. A stopped node deleted its record, so it is not listed. No
// bucket (no node could create it, or all predate it) lists none. The
// whole is given four times the timeout: a lookup and a read in each of
// two buckets.
func (e *env) readMembers(ctx context.Context, nc *nats.Conn) ([]wire.MemberRecord, error) {
	js, err := e.jetStream(nc)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNoJetStream, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 4*e.opts.timeout)
	defer cancel()
	return store.ReadClusterMembers(ctx, js, e.opts.cluster, slog.Default())
}

// statusGathering is one cluster-wide status request, on
// wire.ClusterStatusSubject: every running node answers. It returns
// once every member in known has answered and no other reply came for
// settle, or at the timeout: a member that has not answered by then is
// down.
type statusGathering struct {
	nc        *nats.Conn
	clusterID string
	known     []string
	timeout   time.Duration
	settle    time.Duration
}

// run sends the request and collects the replies, sorted by node; none,
// and no error, when no node runs.
func (g statusGathering) run(ctx context.Context) ([]wire.StatusReply, error) {
	subject := wire.ClusterStatusSubject(g.clusterID)
	var in replyQueue
	in.ready = make(chan struct{}, 1)
	sub, err := g.nc.Subscribe(g.nc.NewInbox(), in.add)
	if err != nil {
		return nil, fmt.Errorf("status request: %w", err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := g.nc.PublishRequest(subject, sub.Subject, nil); err != nil {
		return nil, fmt.Errorf("status request: %w", err)
	}
	timeout := time.NewTimer(g.timeout)
	defer timeout.Stop()
	settle := time.NewTimer(time.Hour)
	settle.Stop()
	defer settle.Stop()
	c := statusReplies{subject: subject, pending: map[string]bool{}}
	for _, n := range g.known {
		if n != "" {
			c.pending[n] = true
		}
	}
	for {
		select {
		case <-ctx.Done():
			return c.sorted(), ctx.Err()
		case <-timeout.C:
			return c.sorted(), nil
		case <-settle.C:
			return c.sorted(), nil
		case <-in.ready:
		}
		if !c.add(in.take()) {
			return nil, nil // no node runs
		}
		if len(c.pending) == 0 && g.settle > 0 {
			settle.Reset(g.settle)
		}
	}
}

// statusReplies are the replies a statusGathering has, and the members
// known of that have not answered yet.
type statusReplies struct {
	subject string
	out     []wire.StatusReply
	pending map[string]bool
}

// add takes in msgs; false when the request found no responders: no node
// runs.
func (c *statusReplies) add(msgs []*nats.Msg) bool {
	for _, m := range msgs {
		if len(m.Data) == 0 && m.Header.Get("Status") == "503" {
			return false
		}
		var r wire.StatusReply
		if err := json.Unmarshal(m.Data, &r); err != nil || r.Node == "" {
			slog.Warn("ignored a reply that is not a status reply", "subject", c.subject, "reply", string(m.Data))
			continue
		}
		c.out = append(c.out, r)
		delete(c.pending, r.Node)
	}
	return true
}

// sorted is the replies sorted by node.
func (c *statusReplies) sorted() []wire.StatusReply {
	slices.SortFunc(c.out, func(a, b wire.StatusReply) int { return strings.Compare(a.Node, b.Node) })
	return c.out
}

// mergeMembers adds to r what the announcements and the status replies
// say: every announced member is listed, with its role, "down" when it
// did not answer.
func mergeMembers(r *statusReport, members []wire.MemberRecord, replies []wire.StatusReply) {
	index := map[string]int{}
	for i, m := range r.Members {
		index[m.Node] = i
	}
	get := func(node string) *memberReport {
		i, ok := index[node]
		if !ok {
			i = len(r.Members)
			index[node] = i
			r.Members = append(r.Members, memberReport{Node: node, HoldsLease: node == r.Leader && r.Leader != ""})
		}
		return &r.Members[i]
	}
	for _, s := range replies {
		m := get(s.Node)
		m.State, m.Metadata = s.Role, s.Metadata
		if m.Health == healthNoAnswer {
			m.Health = "" // it answers, without a health checker
		}
		if m.Health == "" { // what the health reply would have said
			m.Leader, m.Epoch, m.NotReady = s.Leader, s.Epoch, s.NotReady
			m.Notes = stateNotes(*m, *r)
		}
		if !s.StartedAt.IsZero() {
			m.StartedAt = ptr(s.StartedAt.UTC())
		}
	}
	for _, a := range members {
		m := get(a.NodeID)
		m.Kind, m.Protocols = a.Kind, []int{wire.Protocol, a.Speaks()}
		if len(a.Protocols) == 2 {
			m.Protocols[0] = a.Protocols[0]
		}
		if r.Protocol > a.Speaks() {
			m.Notes = append(m.Notes, fmt.Sprintf("speaks election protocol %d at most, the cluster runs %d: it follows and never leads until replaced by a newer build", a.Speaks(), r.Protocol))
		}
		if m.Metadata == nil {
			m.Metadata = a.Metadata
		}
		if m.StartedAt == nil && !a.StartedAt.IsZero() {
			m.StartedAt = ptr(a.StartedAt.UTC())
		}
		if m.State == "" && m.Health == "" || m.Health == healthNoAnswer {
			m.State, m.Health = stateDown, healthNoAnswer
		}
	}
	slices.SortFunc(r.Members, func(a, b memberReport) int { return strings.Compare(a.Node, b.Node) })
}

// stateNotes lists where a member's status reply differs from the lease.
func stateNotes(m memberReport, r statusReport) []string {
	var notes []string
	switch {
	case m.HoldsLease && m.State != wire.StatusLeader:
		notes = append(notes, noteHoldsLease(m.State))
	case !m.HoldsLease && m.State == wire.StatusLeader:
		notes = append(notes, noteLeadsWithoutLease)
	}
	return append(notes, viewNotes(m, r)...)
}

// roleCell is a member's ROLE column: its status role, else the role its
// health reply reports (a node of a version without status replies) in
// the same words: leader or follower.
func roleCell(m memberReport) string {
	if m.State != "" {
		return m.State
	}
	return orDash(roleWord(m.Role))
}
