package wire

import "errors"

// The sentinel errors of the wire vocabulary. Package cluster re-exports
// each under the same name, where they are documented; errors.Is works
// with either name.
var (
	ErrInvalidConfig   = errors.New("cluster: invalid config")
	ErrInvalidLease    = errors.New("cluster: not a lease record")
	ErrProtocolVersion = errors.New("cluster: another protocol version")
)
