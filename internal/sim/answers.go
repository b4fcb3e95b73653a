package sim

import (
	"context"
	"errors"
	"fmt"

	"github.com/ozanturksever/go-cluster/internal/election"
)

// The store's answers, as the driver hands them to the machine: the
// error classes the store gives JetStream's errors.
var (
	errConflict   = errors.New("sim: wrong last sequence")
	errNotFound   = errors.New("sim: key not found")
	errTimeout    = fmt.Errorf("sim: %w", context.DeadlineExceeded)
	errNoStream   = errors.New("sim: stream not found")
	errBucketGone = fmt.Errorf("%w: sim: stream not found", election.ErrBucketDeleted)
)

func conflict() election.Result {
	return election.Result{Err: errConflict, Class: election.Conflict}
}

func notFound() election.Result {
	return election.Result{Err: errNotFound, NotFound: true}
}

func timedOut(id uint64) election.Result {
	return election.Result{ID: id, Err: errTimeout, Class: election.Transient}
}

// bucketGone answers a request to a deleted bucket: the store confirms
// the deletion (a permanent error), but never for a renewal, which would
// cost the deadline (store.renew): its error stays transient.
func bucketGone(req election.Action) election.Result {
	if w, ok := req.(election.Write); ok && w.Purpose == election.Renew {
		return election.Result{Err: errNoStream, Class: election.Transient}
	}
	return election.Result{Err: errBucketGone, Class: election.Permanent}
}

// replied says a reply answered its StepDown or Control with success.
func replied(r election.Reply) bool { return r.Err == nil && (!r.Control || r.Answer.OK) }
