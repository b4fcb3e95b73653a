package cluster

import (
	"context"
	"fmt"
	"maps"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/ozanturksever/go-cluster/internal/engine"
	"github.com/ozanturksever/go-cluster/internal/wire"
	"github.com/ozanturksever/go-cluster/state"
)

// Node is one member of a cluster. Make it with NewNode (campaigns for
// leadership) or NewObserver (follows the leader, never campaigns), then
// Start it. All methods are safe for concurrent use. A Node is used once:
// after Stop, make a new one.
type Node struct {
	cfg    Config
	events *eventFeed
	eng    *engine.Engine // the runtime: everything the Node does, it asks of it
	// beforeAction and suspended are for tests, set before Start: the
	// loop calls beforeAction before carrying out each of the machine's
	// actions, so that a test can stall it at a chosen point; suspended
	// moves the node's clock on, as a suspension of the host would (ns).
	beforeAction func(action any)
	suspended    atomic.Int64
}

// NewNode validates cfg and returns a Node that campaigns for leadership
// once started. hooks may be nil (no hooks), but not a nil pointer of a
// concrete type (a typed nil), whose methods would panic: that, like every
// problem of cfg, is an error wrapping ErrInvalidConfig.
func NewNode(cfg Config, hooks Hooks) (*Node, error) {
	return newNode(cfg, hooks, true)
}

// NewObserver returns a Node that follows the cluster's leader and reports
// changes through hooks.OnLeaderChange, but never campaigns: it never
// becomes leader and sends no KV writes. Useful for dashboards, proxies
// and tools. The calls that need a campaigning node (StepDown,
// StepDownTo, ValidateLeadership, SetMetadata) return an error wrapping
// ErrNotLeader.
func NewObserver(cfg Config, hooks Hooks) (*Node, error) {
	return newNode(cfg, hooks, false)
}

func newNode(cfg Config, hooks Hooks, campaign bool) (*Node, error) {
	cfg = cfg.withDefaults()
	cfg.Metadata = maps.Clone(cfg.Metadata) // the caller's map may change; ours is read by renewals
	n := &Node{cfg: cfg, events: &eventFeed{}}
	n.events.node = n
	ecfg := cfg.engineConfig()
	ecfg.Observer, ecfg.Hooks, ecfg.Events, ecfg.Ending = !campaign, hooks, n.events, n.events.close
	ecfg.Suspended, ecfg.BeforeAction = &n.suspended, func(a any) {
		if n.beforeAction != nil {
			n.beforeAction(a)
		}
	}
	var notReady error
	if cfg.ReadinessCheck != nil {
		notReady = fmt.Errorf("%w: no readiness check has completed yet", ErrNotReady)
	}
	eng, err := engine.New(ecfg, notReady)
	if err := cfg.validate(err, checkHooks(hooks)); err != nil {
		return nil, err
	}
	n.eng = eng
	return n, nil
}

// StepDown gives up leadership: the tenure ctx is cancelled,
// OnLoseLeadership runs, then the lease is released and a follower takes
// over. This node does not campaign again for Config.Cooldown. It returns
// nil when the lease is released, ErrNotLeader if this node is not the
// leader, and an error wrapping ErrReleaseFailed when its tenure ended but
// the release could not be written: followers then take over when the
// lease expires.
func (n *Node) StepDown(ctx context.Context) error { return n.stepDown(ctx, "") }

func (n *Node) stepDown(ctx context.Context, to string) error {
	if err := n.eng.StepDown(ctx, to); err != nil {
		return fmt.Errorf("step down: %w", err)
	}
	return nil
}

// StepDownTo steps down like StepDown and names the successor: the
// released record carries nodeID, and for one RenewInterval only that node
// campaigns; if it does not take the lease by then, any node may. It is
// the API behind remote handover (go-cluster stepdown --to).
func (n *Node) StepDownTo(ctx context.Context, nodeID string) error {
	if err := wire.CheckNodeID("nodeID", nodeID); err != nil {
		return fmt.Errorf("step down: %w", err)
	}
	if nodeID == n.cfg.NodeID {
		return fmt.Errorf("step down: %w: cannot hand over to itself", ErrAlreadyLeader)
	}
	return n.stepDown(ctx, nodeID)
}

// ValidateLeadership proves, right now, that this node holds the lease, by
// a renewal sent after the call and confirmed in the bucket (P7), and
// returns the epoch to pass to a fenced resource. Call it before a critical operation. A read could be
// answered by a stale replica; only a successful write proves tenure.
// Epochs are large numbers: a bucket's first is its creation time in
// microseconds since 1970 (about 1.8e15), and each tenure adds one, so a
// bucket created again starts above every epoch of the one before
// (docs/design.md §2.4, I1).
// Errors wrap ErrNotLeader (also for an observer) or ErrStopped, or are
// ctx's.
func (n *Node) ValidateLeadership(ctx context.Context) (int64, error) {
	epoch, err := n.validateLeadership(ctx)
	n.cfg.Metrics.ObserveFencing(err)
	return epoch, err
}

func (n *Node) validateLeadership(ctx context.Context) (int64, error) {
	epoch, err := n.eng.Validate(ctx)
	if err != nil {
		return 0, fmt.Errorf("validate leadership: %w", err)
	}
	return epoch, nil
}

// WaitForLeader blocks until some node (maybe this one) is known to lead,
// and returns its NodeID. It fails with ctx's error, or ErrStopped.
func (n *Node) WaitForLeader(ctx context.Context) (string, error) {
	return n.eng.WaitLeader(ctx)
}

// Role returns RolePrimary (the leader) while this node's tenure is live,
// else RolePassive (a follower, or an observer made by NewObserver).
func (n *Node) Role() Role {
	if n.IsLeader() {
		return RolePrimary
	}
	return RolePassive
}

// IsLeader reports whether this node holds a live tenure: it acquired the
// lease and its own deadline (last successful renewal sent + LeaseTTL -
// SafetyMargin) has not passed. To read the epoch with it, use Tenure.
func (n *Node) IsLeader() bool { return n.eng.Tenure() != nil }

// Tenure is this node's live tenure, read at once.
type Tenure struct {
	// Ctx is the ctx OnBecomeLeader got: cancelled when the tenure ends.
	Ctx context.Context
	// Epoch is the tenure's fencing token (see ValidateLeadership).
	Epoch int64
	// TTL is the LeaseTTL the tenure runs on: the bucket's, which every
	// node adopts whatever its Config says.
	TTL time.Duration
	// Renewed is when the tenure's latest acknowledged write (its
	// acquisition or a renewal) was sent, on this process's clock.
	Renewed time.Time
	// Deadline is when the tenure ends unless a renewal lands first:
	// Renewed + TTL - SafetyMargin (scaled to TTL), on this process's
	// clock. Renewals move it later. No other
	// node can win the lease before it, so work the leader must have
	// finished before a successor starts (a child process to kill, a
	// device to let go) is bounded by it: a supervisor that sees less time
	// left than the work needs to stop can stop it early.
	Deadline time.Time
}

// Tenure returns this node's live tenure, its ctx, epoch and deadline
// read together, and false when it does not lead. IsLeader then Epoch
// can straddle a change of tenure; Tenure cannot. To prove the tenure
// to a fenced resource, use ValidateLeadership.
func (n *Node) Tenure() (Tenure, bool) {
	t := n.eng.Tenure()
	if t == nil {
		return Tenure{}, false
	}
	return Tenure{Ctx: t.Ctx, Epoch: t.Epoch, TTL: t.TTL, Renewed: t.Sent, Deadline: t.Deadline}, true
}

// Leader returns the NodeID of the current leader as this node knows it,
// or "" when nobody holds the lease (released, or expired on this node's
// clock) or it is not known yet.
func (n *Node) Leader() string {
	return n.eng.Snapshot().Leader
}

// Epoch returns this node's epoch while it leads; otherwise the epoch of
// the last lease record it saw; 0 if none. IsLeader then Epoch can
// straddle a change: Tenure reads both at once.
func (n *Node) Epoch() int64 {
	if t := n.eng.Tenure(); t != nil {
		return t.Epoch
	}
	return n.eng.Snapshot().Epoch
}

// Lease returns the last valid lease record this node saw, and false if it
// has seen none: the leader's NodeID, Epoch and Metadata (where to send
// writes, say) while Leader() names it; a released record (NodeID "")
// otherwise. Metadata is a copy. For display and routing: never decide
// leadership from it (IsLeader, Tenure, ValidateLeadership do).
func (n *Node) Lease() (Lease, bool) {
	s := n.eng.Snapshot()
	l := Lease(s.Lease)
	l.Metadata = maps.Clone(l.Metadata) // the view's stays as it is
	return l, s.HasRec
}

// Ready returns nil when this node may lead as far as its
// Config.ReadinessCheck goes (always, without one); otherwise an error
// wrapping ErrNotReady and the last check's error. A node is not ready
// until a check has passed, and stops being ready after ReadinessThreshold
// failures in a row. Health replies carry it (package health).
func (n *Node) Ready() error {
	return n.eng.Snapshot().Ready
}

// Config returns the configuration in use, with defaults applied: its
// ClusterID and NodeID name the node. Once a campaigning node has started,
// its LeaseTTL is the bucket's, the one its tenures run on, which every
// node adopts whatever NewNode was given (docs/design.md §2.7); the other
// timings stay as configured.
func (n *Node) Config() Config {
	c := n.cfg
	c.Metadata = maps.Clone(c.Metadata)
	if ttl := n.eng.Snapshot().BucketTTL; ttl > 0 {
		c.LeaseTTL = ttl
	}
	return c
}

// Conn returns the NATS connection in use, or nil before Start. Add-ons
// (health) can share it.
func (n *Node) Conn() *nats.Conn { return n.eng.Conn() }

// Done is closed when the Node has stopped, by Stop or by a permanent
// error (see Err).
func (n *Node) Done() <-chan struct{} { return n.eng.Done() }

// Err returns why the Node stopped on its own: an error wrapping
// ErrPermissionDenied, ErrBucketConfig or another permanent cause (not
// ErrBucketDeleted: a node waits for its bucket). It is
// nil while running and after a plain Stop.
func (n *Node) Err() error { return n.eng.Snapshot().Err }

// State returns the cluster's fenced state: keys every node reads and
// only the leader writes, each write fenced on the lease by the NATS
// server (package state).
func (n *Node) State() *state.State { return state.New(n.eng.Fenced()) }

// SetPriority sets the priority this node has from now on, between 0 and
// Config.Priority: keepalived's weighted checks lower a node's priority
// while they fail, so that a problem of one host moves the leadership to
// a healthier one while a problem of every host keeps it where it is.
// A leader publishes it with its next renewal (within RenewInterval) and
// hands over when a follower of higher priority asks (Config.Priority);
// a follower asks a leader whose record carries a lower priority than
// its own now, and does not ask when it has been lowered to or below
// it. The error wraps ErrInvalidConfig for a priority out of range.
// Config keeps the Priority NewNode was given. It may be called at any
// time, before Start too.
func (n *Node) SetPriority(p int) error {
	if p < 0 || p > n.cfg.Priority {
		return fmt.Errorf("%w: set priority: %d is not between 0 and Config.Priority (%d)", ErrInvalidConfig, p, n.cfg.Priority)
	}
	n.eng.SetPriority(p)
	return nil
}

// Role is what a node currently is in its cluster, in the words of the
// specification this package implements: RolePrimary is the leader,
// RolePassive a follower or an observer. The rest of the library (hooks,
// events, logs, metrics, the CLI) says leader, follower and observer; Role
// and its String values "PRIMARY" and "PASSIVE" are kept as the
// specification has them, and the health package's wire format carries
// them.
//
// Role does not tell a follower from an observer: both are RolePassive. A
// Node made by NewObserver is always an observer (it never campaigns); the
// built-in status reply, which only a campaigning node sends (role
// "follower"), tells them apart for other processes.
type Role int

const (
	// RolePassive is a node that does not lead: a follower (it campaigns
	// when the lease is released or expires) or an observer (it never
	// campaigns).
	RolePassive Role = iota
	// RolePrimary is the leader: the node that holds the lease.
	RolePrimary
)

// String returns "PASSIVE", "PRIMARY", or "UNKNOWN": the specification's
// words for a follower or observer, and for the leader.
func (r Role) String() string {
	switch r {
	case RolePassive:
		return "PASSIVE"
	case RolePrimary:
		return "PRIMARY"
	default:
		return "UNKNOWN"
	}
}

// IsPrimary reports whether r is RolePrimary: the leader.
func (r Role) IsPrimary() bool { return r == RolePrimary }

// IsPassive reports whether r is RolePassive: a follower or an observer.
func (r Role) IsPassive() bool { return r == RolePassive }
