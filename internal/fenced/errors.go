package fenced

import "errors"

// The fenced state's sentinels. Package cluster re-exports each under the
// same name and documents it there.
var (
	// ErrFenced: the server refused a write because the lease moved.
	ErrFenced = errors.New("cluster: write fenced: the lease moved")
	// ErrWriteUncertain: a write a server behind the stream refused,
	// whose outcome is not known.
	ErrWriteUncertain = errors.New("cluster: state write outcome unknown")
	// ErrInvalidKey: a state key that ValidateKey refuses.
	ErrInvalidKey = errors.New("cluster: invalid state key")
	// ErrKeyNotFound: the key has no value.
	ErrKeyNotFound = errors.New("cluster: state key not found")
	// ErrInvalidCommit: a Commit's writes are not one atomic batch.
	ErrInvalidCommit = errors.New("cluster: invalid commit")
	// ErrStateConflict: a Commit's precondition on a key did not hold.
	ErrStateConflict = errors.New("cluster: state conflict")
)
