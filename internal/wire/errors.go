package wire

import "errors"

// The sentinel errors of the wire vocabulary. Package cluster re-exports
// each under the same name, where they are documented; errors.Is works
// with either name.
var (
	ErrInvalidConfig   = errors.New("cluster: invalid config")
	ErrInvalidLease    = errors.New("cluster: not a lease record")
	ErrProtocolVersion = errors.New("cluster: another protocol version")
	// The store's: the server refused a subject, the bucket's settings
	// break the election, the server or account has no JetStream.
	ErrPermissionDenied = errors.New("cluster: permission denied")
	ErrBucketConfig     = errors.New("cluster: bucket settings unusable")
	ErrNoJetStream      = errors.New("cluster: JetStream not available")
	// The election's: the machine returns them or ends a tenure with
	// them; the driver, ErrDuplicateNodeID (E14) and ErrNotReady.
	ErrLeaseExpired    = errors.New("cluster: lease expired")
	ErrEpochMismatch   = errors.New("cluster: epoch mismatch")
	ErrNotLeader       = errors.New("cluster: not leader")
	ErrAlreadyLeader   = errors.New("cluster: already leader")
	ErrBucketDeleted   = errors.New("cluster: bucket deleted")
	ErrStopped         = errors.New("cluster: node stopped")
	ErrEpochExhausted  = errors.New("cluster: epoch exhausted")
	ErrReleaseFailed   = errors.New("cluster: lease not released")
	ErrDuplicateNodeID = errors.New("cluster: NodeID used by another process")
	ErrNotReady        = errors.New("cluster: not ready")
	// The engine's lifecycle and calls.
	ErrNotStarted     = errors.New("cluster: node not started")
	ErrAlreadyStarted = errors.New("cluster: node already started")
	ErrCalledFromHook = errors.New("cluster: called from a hook; completes after the hook returns")
	ErrConnect        = errors.New("cluster: cannot connect to NATS")
)
