package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/spf13/pflag"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/health"
	"github.com/ozanturksever/go-cluster/internal/agent"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// statusCmd shows who leads, since when, and every member.
type statusCmd struct {
	settle time.Duration
}

func (c *statusCmd) define(fs *pflag.FlagSet) { defineSettle(fs, &c.settle) }

// defineSettle adds --settle, the flag of the commands that gather the
// replies of every member.
func defineSettle(fs *pflag.FlagSet, settle *time.Duration) {
	fs.DurationVar(settle, "settle", defaultSettle, "stop once every member known of (the leader, and those the replies name) has answered and no other reply came for `D` (0: wait the whole --timeout)")
}

func (c *statusCmd) run(ctx context.Context, e *env, _ []string) error {
	if c.settle < 0 {
		return fmt.Errorf("%w: --settle must not be negative", errUsage)
	}
	nc, kv, err := e.dialBucket(ctx)
	if err != nil {
		return err
	}
	defer nc.Close()
	lease, err := e.readLease(ctx, kv)
	if err != nil {
		return err
	}
	members, err := e.readMembers(ctx, nc)
	if err != nil {
		// Best effort, as the announcements: the replies still list
		// whoever runs.
		fmt.Fprintf(e.stderr, "warning: %v: members that do not answer are not listed\n", err)
	}
	// Every member answers two requests: the built-in status request,
	// and the health query where the application wires a health checker.
	// The members known so far are the announced ones, the holder and the
	// successor a release names; the replies name others.
	g := gathering{nc: nc, clusterID: e.opts.cluster, timeout: e.opts.timeout, settle: c.settle}
	switch lease.State {
	case stateHeld:
		g.known = []string{lease.Lease.NodeID}
	case stateReleased:
		g.known = []string{lease.Lease.Next}
	}
	sg := statusGathering{nc: nc, clusterID: e.opts.cluster, timeout: e.opts.timeout, settle: c.settle, known: g.known}
	for _, m := range members {
		sg.known = append(sg.known, m.NodeID)
	}
	done := e.waiting("waiting for the members' replies on " + wire.ClusterStatusSubject(e.opts.cluster))
	var replies []wire.StatusReply
	var serr error
	statusDone := make(chan struct{})
	go func() {
		defer close(statusDone)
		replies, serr = sg.run(ctx)
	}()
	resps, herr := g.run(ctx)
	<-statusDone
	done()
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case serr != nil:
		return serr
	case herr == nil:
	case errors.Is(herr, health.ErrNoResponders):
		herr = fmt.Errorf("no member answers health queries on %s", health.ClusterSubject(e.opts.cluster))
	default:
		herr = fmt.Errorf("health query: %v", herr)
	}
	r := buildStatus(e.opts.cluster, lease, resps, herr, e.now())
	mergeMembers(&r, members, replies)
	if e.opts.json {
		err = writeJSON(e.stdout, r)
	} else {
		if r.HealthError != "" && len(replies) == 0 {
			fmt.Fprintf(e.stderr, "warning: %s, and none answers status requests on %s\n", r.HealthError, wire.ClusterStatusSubject(e.opts.cluster))
		}
		err = renderStatus(e.stdout, r)
	}
	if err != nil {
		return err
	}
	return noLeader(lease)
}

// noLeader returns an error wrapping errNoLeader when the lease names no
// holder: status then exits with exitNoLeader, for scripts and probes.
func noLeader(l leaseState) error {
	switch l.State {
	case stateHeld:
		return nil
	case stateReleased:
		return fmt.Errorf("%w: the lease was released at epoch %d", errNoLeader, l.Lease.Epoch)
	case stateAbsent:
		return fmt.Errorf("%w: no node has won the lease yet", errNoLeader)
	case stateDeleted:
		return fmt.Errorf("%w: the lease key was deleted", errNoLeader)
	default:
		return fmt.Errorf("%w: the lease is not a valid record", errNoLeader)
	}
}

// statusReport is the output of status.
type statusReport struct {
	Cluster string `json:"cluster"`
	Bucket  string `json:"bucket"`
	// Lease is the state of the lease key: held, released, absent,
	// deleted or invalid.
	Lease    string `json:"lease"`
	Leader   string `json:"leader"` // "" when nobody leads
	Epoch    int64  `json:"epoch"`
	Revision uint64 `json:"revision"`
	// AcquiredAt is when the leader won the lease, by its own wall clock.
	AcquiredAt *time.Time `json:"acquired_at,omitempty"`
	// LeadingForMs is now minus AcquiredAt: an estimate, since it compares
	// this machine's wall clock with the leader's.
	LeadingForMs *int64 `json:"leading_for_ms,omitempty"`
	// ExpiresAt is the writer's estimate of the lease's expiry.
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	// WrittenAt is the NATS server's time of the last write (a renewal).
	WrittenAt *time.Time `json:"written_at,omitempty"`
	TTLMs     int64      `json:"ttl_ms,omitempty"`
	Priority  int        `json:"priority,omitempty"`
	// Metadata is the leader's Config.Metadata, as its lease record
	// carries it (an address to reach it, a zone).
	Metadata map[string]string `json:"metadata,omitempty"`
	// Next, on a released lease, is the successor the last leader named.
	Next    string `json:"next,omitempty"`
	Problem string `json:"problem,omitempty"`
	// Protocol is the election protocol the cluster runs: its lease
	// record's version (docs/production.md, "Moving to a new version").
	Protocol int `json:"protocol,omitempty"`
	// ClockSkew is set when AcquiredAt is ahead of this machine's clock.
	ClockSkew   bool           `json:"clock_skew,omitempty"`
	Members     []memberReport `json:"members"`
	HealthError string         `json:"health_error,omitempty"`
}

// memberReport is one member: its announcement, its status reply and its
// health reply, merged with the lease.
type memberReport struct {
	Node string `json:"node"`
	// State is the member's role as its status reply says: "leader",
	// "follower", "observer" or "not ready" (wire.StatusReply.Role);
	// "down" for a member that announced itself and did not withdraw (a
	// node withdraws when it stops) but did not answer within --timeout;
	// empty for a node that answers neither (or is of a version without
	// status replies). Stopped members are not listed.
	State string `json:"state,omitempty"`
	// Kind is "campaigning" or "observer", from the member's announcement.
	Kind string `json:"kind,omitempty"`
	// Metadata is the member's Config.Metadata.
	Metadata map[string]string `json:"metadata,omitempty"`
	// StartedAt is when the member started, by its own wall clock.
	StartedAt *time.Time `json:"started_at,omitempty"`
	// Role is the role of its health reply as it comes: PRIMARY (the
	// leader) or PASSIVE (a follower), the specification's words, kept
	// for scripts; the table shows leader or follower (roleWord).
	Role string `json:"role,omitempty"`
	// Health is "ok", "not ready" (the node answered, but its
	// ReadinessCheck has not passed, or failed too often: it does not
	// campaign, and as the leader it steps down), "error" (the node
	// answered with an error), "no answer" (down, or it holds the lease
	// but did not answer) or empty (it answers status requests but wires
	// no health checker).
	Health string `json:"health,omitempty"`
	// NotReady is why the node is not ready, as it says (its notReady);
	// also set when Health is "error" and the error reply carries it.
	NotReady string `json:"not_ready,omitempty"`
	Error    string `json:"error,omitempty"`
	Leader   string `json:"leader,omitempty"` // the leader the node knows
	// Protocols are the lowest and highest election protocol the member
	// speaks, from its announcement ([3 3] when it names none).
	Protocols  []int          `json:"protocols,omitempty"`
	Epoch      int64          `json:"epoch,omitempty"` // the epoch the node knows
	UptimeMs   int64          `json:"uptime_ms,omitempty"`
	HoldsLease bool           `json:"holds_lease,omitempty"`
	Notes      []string       `json:"notes,omitempty"` // where the node disagrees with the lease
	Custom     map[string]any `json:"custom,omitempty"`
	// VIPs and FailingChecks are what a member run by go-cluster agent
	// publishes in its health replies (agent.CustomVIPs,
	// agent.CustomFailingChecks): the VIPs it holds, and its checks that
	// do not pass. Nil for other members.
	VIPs          []string `json:"vips,omitempty"`
	FailingChecks []string `json:"failing_checks,omitempty"`
}

// Health values of a member.
const (
	healthOK       = "ok"
	healthNotReady = "not ready"
	healthError    = "error"
	healthNoAnswer = "no answer"
)

// buildStatus merges the lease with the members' health replies.
func buildStatus(clusterID string, lease leaseState, resps []health.Response, herr error, now time.Time) statusReport {
	r := statusReport{
		Cluster: clusterID, Bucket: wire.BucketName(clusterID),
		Lease: lease.State, Leader: lease.leader(), Revision: lease.Revision,
		Problem: lease.Problem, Members: []memberReport{},
	}
	if herr != nil {
		r.HealthError = herr.Error()
	}
	if !lease.Written.IsZero() {
		r.WrittenAt = ptr(lease.Written.UTC())
	}
	switch lease.State {
	case stateHeld, stateReleased:
		l := lease.Lease
		r.Epoch, r.TTLMs, r.Priority, r.Next, r.Protocol = l.Epoch, l.TTLMillis, l.Priority, l.Next, l.Version
		if lease.State == stateHeld {
			r.Metadata = l.Metadata
			if !l.AcquiredAt.IsZero() {
				r.AcquiredAt = ptr(l.AcquiredAt.UTC())
				d := now.Sub(l.AcquiredAt)
				if d < 0 {
					d, r.ClockSkew = 0, true
				}
				r.LeadingForMs = ptr(d.Milliseconds())
			}
			if !l.ExpiresAt.IsZero() {
				r.ExpiresAt = ptr(l.ExpiresAt.UTC())
			}
		}
	}
	holderSeen := false
	for _, h := range resps {
		m := memberReport{
			Node: h.NodeID, Role: h.Role, Health: healthOK, NotReady: h.NotReady, Leader: h.Leader, Epoch: h.Epoch,
			UptimeMs: h.UptimeMs, Custom: h.Custom, HoldsLease: h.NodeID == r.Leader && r.Leader != "",
			VIPs: customStrings(h.Custom, agent.CustomVIPs), FailingChecks: customStrings(h.Custom, agent.CustomFailingChecks),
		}
		if h.Error != "" {
			m.Health, m.Error = healthError, h.Error
		} else {
			if !h.IsReady() {
				m.Health = healthNotReady
			}
			m.Notes = disagreements(m, r)
		}
		holderSeen = holderSeen || m.HoldsLease
		r.Members = append(r.Members, m)
	}
	if r.Leader != "" && !holderSeen {
		r.Members = append(r.Members, memberReport{Node: r.Leader, Health: healthNoAnswer, HoldsLease: true})
	}
	sort.Slice(r.Members, func(i, j int) bool { return r.Members[i].Node < r.Members[j].Node })
	return r
}

// disagreements lists where a member's view differs from the lease. Right
// after a handover a few are normal: each node learns from its own watch.
func disagreements(m memberReport, r statusReport) []string {
	var notes []string
	leads := m.Role == cluster.RolePrimary.String()
	switch {
	case m.HoldsLease && !leads:
		notes = append(notes, noteHoldsLease(roleWord(m.Role)))
	case !m.HoldsLease && leads:
		notes = append(notes, noteLeadsWithoutLease)
	}
	return append(notes, viewNotes(m, r)...)
}

// viewNotes lists where the leader and epoch a member knows differ from
// the lease's.
func viewNotes(m memberReport, r statusReport) []string {
	var notes []string
	if m.Leader != r.Leader {
		if m.Leader == "" {
			notes = append(notes, "knows no leader")
		} else {
			notes = append(notes, "sees leader "+m.Leader)
		}
	}
	if m.Epoch != 0 && m.Epoch < r.Epoch {
		notes = append(notes, fmt.Sprintf("epoch %d behind", r.Epoch-m.Epoch))
	}
	return notes
}

func ptr[T any](v T) *T { return &v }

// customStrings is the list of strings under key in a health reply's
// custom values: nil when absent or not a list of strings, empty (not
// nil) for an empty list.
func customStrings(custom map[string]any, key string) []string {
	list, ok := custom[key].([]any)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(list))
	for _, v := range list {
		s, ok := v.(string)
		if !ok {
			return nil
		}
		out = append(out, s)
	}
	return out
}
