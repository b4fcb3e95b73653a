package cluster

import (
	"errors"

	"github.com/ozanturksever/go-cluster/internal/wire"
)

// Sentinel errors. Every error the package returns wraps one of these (or a
// context error), so callers test them with errors.Is. Each says
// "cluster: ..." as its first words, like vip's and health's. Those the
// election returns are the same values as internal/election's. The fenced
// state's are package state's.
var (
	// ErrLeaseExpired: this node's tenure ran out (no renewal succeeded in
	// time) before the operation could prove leadership.
	ErrLeaseExpired = wire.ErrLeaseExpired
	// ErrEpochMismatch: the lease in the store is not this node's tenure any
	// more (another node took it, or it was changed or removed out of band),
	// or a request named an epoch that is not the leader's.
	ErrEpochMismatch = wire.ErrEpochMismatch
	// ErrNotLeader: the operation needs the lease and this node does not
	// hold it; or it needs a campaigning node and this one is an observer
	// (NewObserver).
	ErrNotLeader = wire.ErrNotLeader
	// ErrAlreadyLeader: a handover named the node that already leads
	// (StepDownTo itself, or a step-down request whose "to" is the leader).
	ErrAlreadyLeader = wire.ErrAlreadyLeader
	// ErrCASFailed is reserved: kept from the specification, never returned.
	// A lost compare-and-swap is a normal outcome of an election here (the
	// node follows the winner), not an error the API reports.
	//
	// Deprecated: never returned; kept so that code written against the
	// specification compiles.
	ErrCASFailed = errors.New("cluster: compare-and-swap failed")
	// ErrProtocolVersion: the bucket, or the lease record in it, belongs
	// to a version of the election protocol this node does not speak.
	// Start refuses an older one (a cluster of protocol 1 or 2 moves with
	// go-cluster init --upgrade); a newer lease record, written once a
	// cluster moved on in a rolling upgrade, leaves the node following,
	// never leading, and Ready returns this error (docs/production.md,
	// "Moving to a new version").
	ErrProtocolVersion = wire.ErrProtocolVersion
	// ErrNotStarted: the Node has not been started.
	ErrNotStarted = wire.ErrNotStarted
	// ErrAlreadyStarted: Start was called twice, or after Stop (then the
	// error wraps ErrStopped too): a Node starts once.
	ErrAlreadyStarted = wire.ErrAlreadyStarted
	// ErrInCooldown is reserved: kept from the specification, never returned.
	// A node in its Cooldown simply does not campaign, and a handover that
	// names it overrides the cooldown, so no call fails for it.
	//
	// Deprecated: never returned; kept so that code written against the
	// specification compiles.
	ErrInCooldown = errors.New("cluster: node in cooldown period")

	// ErrInvalidConfig: a Config field (or an argument such as StepDownTo's
	// node ID, or NewNode's hooks) is missing, out of range or unusable.
	// The wrapping message names it; NewNode and NewObserver join one
	// such error per problem, so every one is reported at once.
	ErrInvalidConfig = wire.ErrInvalidConfig
	// ErrBucketDeleted: the coordination bucket does not exist (deleted
	// while the node ran). State calls return it, and a Start that races
	// the deletion. A running node does not stop on it: it leads nothing
	// and waits for the bucket, keeping its memory of the epoch, for as
	// long as it runs (docs/design.md §5.4); Stop ends the wait.
	ErrBucketDeleted = wire.ErrBucketDeleted
	// ErrPermissionDenied: the NATS server refused a subject this node
	// needs. Permanent: the node stops campaigning.
	ErrPermissionDenied = wire.ErrPermissionDenied
	// ErrBucketConfig: the coordination bucket exists with settings the
	// election cannot use (a TTL that would age the lease out and restart
	// the epoch, or values too small for a lease record). Permanent.
	ErrBucketConfig = wire.ErrBucketConfig
	// ErrStopped: the Node has been stopped (by Stop, or by a permanent
	// error): a call made after, a Start after Stop (with
	// ErrAlreadyStarted), or a state write whose connection Stop closed.
	ErrStopped = wire.ErrStopped
	// ErrEpochExhausted: the lease carries the largest epoch an int64 holds,
	// so no further tenure can have a higher one. Permanent: the node stops
	// rather than wrap the epoch or hand one epoch to two tenures. An
	// operator must write a record with a sane epoch (and every fenced
	// resource must be told) before the cluster can lead again.
	ErrEpochExhausted = wire.ErrEpochExhausted
	// ErrNoJetStream: the server, or the account, has no JetStream.
	// Permanent.
	ErrNoJetStream = wire.ErrNoJetStream
	// ErrReleaseFailed: a StepDown ended this node's tenure, but the
	// released record could not be written (the lease moved, or NATS did
	// not answer three attempts). Nobody leads until a follower sees the
	// lease expire, one LeaseTTL later; the wrapped error says why.
	ErrReleaseFailed = wire.ErrReleaseFailed
	// ErrDuplicateNodeID: another running process uses this node's NodeID
	// (a copied config, a container restarted beside its old self) and
	// holds the lease. This node stops rather than follow under a name
	// that is not its own. Permanent. Give every process its own NodeID.
	ErrDuplicateNodeID = wire.ErrDuplicateNodeID
	// ErrCalledFromHook: Stop or StepDown was called from a hook, this
	// Node's or another's. It cannot wait there (it would wait for the hook
	// that called it, or for a hook that waits for this one), so it has
	// started the operation and returns at once; the rest happens when the
	// hooks have returned. Watch Done for the end of a Stop.
	ErrCalledFromHook = wire.ErrCalledFromHook
)

// ErrConnect: Start could not connect to NATS. It wraps nats.go's error
// (for example nats.ErrNoServers).
var ErrConnect = wire.ErrConnect

// ErrNotReady: the node's Config.ReadinessCheck has not passed yet, or has
// failed ReadinessThreshold times in a row: it does not campaign, and a
// leader steps down. Node.Ready returns it, wrapping the check's error.
var ErrNotReady = wire.ErrNotReady
