package election

import "errors"

// The sentinel errors the machine returns or ends a tenure with. Package
// cluster re-exports each under the same name, where they are documented.
var (
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
)

// ErrClass says what the election does after an error of a request.
type ErrClass int

const (
	Transient ErrClass = iota // retry with backoff; outcome of a write unknown
	Conflict                  // lost a compare-and-swap
	Permanent                 // stop campaigning and surface it
)
