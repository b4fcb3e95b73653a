package fenced

import (
	"errors"

	"github.com/ozanturksever/go-cluster/internal/wire"
)

// How a fenced write ended, for metrics (string).
const (
	OutcomeOK        = "ok"         // the server stored it
	OutcomeFenced    = "fenced"     // the server refused it: the lease had moved (ErrFenced)
	OutcomeNotLeader = "not_leader" // refused locally: this node's tenure had ended (ErrNotLeader)
	OutcomeConflict  = "conflict"   // a Commit's Expect did not hold (ErrStateConflict)
	OutcomeUncertain = "uncertain"  // refused by a server behind the stream; it may have landed (ErrWriteUncertain)
	OutcomeError     = "error"      // any other failure (a timeout: it may have landed)
)

// Outcome classifies the error of a fenced write. A refusal by the server
// wraps both ErrFenced and ErrNotLeader: it counts as fenced.
func Outcome(err error) string {
	switch {
	case err == nil:
		return OutcomeOK
	case errors.Is(err, ErrFenced):
		return OutcomeFenced
	case errors.Is(err, ErrStateConflict):
		return OutcomeConflict
	case errors.Is(err, ErrWriteUncertain):
		return OutcomeUncertain
	case errors.Is(err, wire.ErrNotLeader):
		return OutcomeNotLeader
	default:
		return OutcomeError
	}
}
