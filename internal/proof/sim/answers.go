package sim

import (
	"context"
	"errors"
	"fmt"

	"github.com/ozanturksever/go-cluster/internal/election"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// The store's answers, as the driver hands them to the machine: the
// error classes the store gives JetStream's errors.
var (
	errConflict   = errors.New("sim: wrong last sequence")
	errTimeout    = fmt.Errorf("sim: %w", context.DeadlineExceeded)
	errNoStream   = errors.New("sim: stream not found")
	errBucketGone = fmt.Errorf("%w: sim: stream not found", wire.ErrBucketDeleted)
)

func conflict(id uint64) election.Event {
	return election.WriteResult{ID: id, Err: errConflict, Class: election.Conflict}
}

// timedOut is the answer a request gets when none came in time.
func timedOut(req election.Action) election.Event {
	return withError(req, errTimeout, election.Transient)
}

// bucketGone answers a request to a deleted bucket: the store confirms
// the deletion (a permanent error), but never for a renewal, which would
// cost the deadline (store.renew): its error stays transient.
func bucketGone(req election.Action) election.Event {
	if w, ok := req.(election.Write); ok && w.Purpose == election.Renew {
		return withError(req, errNoStream, election.Transient)
	}
	return withError(req, errBucketGone, election.Permanent)
}

// withError is req's answer with err of class c.
func withError(req election.Action, err error, c election.ErrClass) election.Event {
	switch r := req.(type) {
	case election.Write:
		return election.WriteResult{ID: r.ID, Err: err, Class: c}
	case election.Confirm:
		return election.ConfirmResult{ID: r.ID, Err: err, Class: c}
	case election.Watch:
		return election.WatchStarted{ID: r.ID, Err: err, Class: c}
	}
	return nil
}

// replied says a reply answered its StepDown with success.
func replied(r election.Reply) bool { return r.Err == nil }
