package cluster

import (
	"errors"
)

// Sentinel errors. Every error the package returns wraps one of these (or a
// context error), so callers test them with errors.Is.
var (
	// ErrLeaseExpired: this node's tenure ran out (no renewal succeeded in
	// time) before the operation could prove leadership.
	ErrLeaseExpired = errors.New("lease expired")
	// ErrEpochMismatch: another node took the lease over; the epoch in the
	// store is not this node's.
	ErrEpochMismatch = errors.New("epoch mismatch - another node took over")
	// ErrNotLeader: the operation needs the lease and this node does not hold it.
	ErrNotLeader = errors.New("not the leader")
	// ErrAlreadyLeader is kept from the specification; the Node API does not
	// currently return it.
	ErrAlreadyLeader = errors.New("already leader")
	// ErrCASFailed: a compare-and-swap on the lease lost a race.
	ErrCASFailed = errors.New("compare-and-swap failed")
	// ErrNotStarted: the Node has not been started.
	ErrNotStarted = errors.New("node not started")
	// ErrAlreadyStarted: Start was called twice, or after Stop.
	ErrAlreadyStarted = errors.New("node already started")
	// ErrInCooldown: the node stepped down recently and does not campaign yet.
	ErrInCooldown = errors.New("node in cooldown period")

	// ErrInvalidConfig: a Config field is missing or out of range. The
	// wrapping message names the field.
	ErrInvalidConfig = errors.New("invalid config")
	// ErrBucketDeleted: the coordination bucket disappeared while the node
	// was running. Permanent: the node stops campaigning.
	ErrBucketDeleted = errors.New("coordination bucket deleted")
	// ErrPermissionDenied: the NATS server refused a subject this node
	// needs. Permanent: the node stops campaigning.
	ErrPermissionDenied = errors.New("permission denied")
	// ErrBucketConfig: the coordination bucket exists with settings the
	// election cannot use (a TTL that would age the lease out and restart
	// the epoch, or values too small for a lease record). Permanent.
	ErrBucketConfig = errors.New("coordination bucket settings unusable")
	// ErrStopped: the Node has been stopped (by Stop, or by a permanent error).
	ErrStopped = errors.New("node stopped")
	// ErrObserver: the operation needs a campaigning node, and this Node was
	// made with NewObserver.
	ErrObserver = errors.New("observer node does not campaign")
	// ErrEpochExhausted: the lease carries the largest epoch an int64 holds,
	// so no further tenure can have a higher one. Permanent: the node stops
	// rather than wrap the epoch or hand one epoch to two tenures. An
	// operator must write a record with a sane epoch (and every fenced
	// resource must be told) before the cluster can lead again.
	ErrEpochExhausted = errors.New("epoch exhausted: the lease holds the largest epoch")
	// ErrNoJetStream: the server, or the account, has no JetStream.
	// Permanent.
	ErrNoJetStream = errors.New("JetStream not available")
	// ErrCalledFromHook: Stop or StepDown was called from a hook. It cannot
	// wait there (it would wait for the hook that called it), so it has
	// started the operation and returns at once; the rest happens when the
	// hook returns. Watch Done for the end of a Stop.
	ErrCalledFromHook = errors.New("called from a hook: it completes after the hook returns")
)

// ErrNotReady: the node's Config.ReadinessCheck has not passed yet, or has
// failed ReadinessThreshold times in a row: it does not campaign, and a
// leader steps down. Node.Ready returns it, wrapping the check's error.
var ErrNotReady = errors.New("cluster: not ready")

// errBucketRecreated is the cause given when a tenure ends because the
// bucket was deleted and created again under the running node.
var errBucketRecreated = errors.New("the bucket was deleted and created again")
