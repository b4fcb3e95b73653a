package fenced

// The attempts of one fenced write, shared by Put, Delete and Commit: each
// checked on the tenure's latest lease record, sent again until the server
// stores it or a refusal proves the tenure over (docs/design.md §10).

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/store"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// maxWriteAttempts bounds the retries of one write; each needs the lease
// moved by this node's own renewal, or a write in flight on the lease.
const maxWriteAttempts = 100

// Run sends w to st, fenced on the lease, and tells the node how it
// ended (Node.ObserveWrite). It returns the revision of w's last message.
func (s *State) Run(ctx context.Context, st *store.Store, w Sender) (uint64, error) {
	rev, err := s.attempts(ctx, st, w)
	err = closedUnder(st, err)
	s.Node.ObserveWrite(Outcome(err))
	return rev, err
}

// closedUnder wraps with wire.ErrStopped the error of a write whose answer was
// lost because the node's connection closed: Stop closes the connection
// the node dialled, and a shared one that the application closes stops
// the node. Like a timeout, it leaves the write's outcome unknown.
func closedUnder(st *store.Store, err error) error {
	if err == nil || errors.Is(err, wire.ErrStopped) || !errors.Is(err, nats.ErrConnectionClosed) || !st.Conn().IsClosed() {
		return err
	}
	return fmt.Errorf("%w: the connection closed with the write in flight (its outcome is unknown): %w", wire.ErrStopped, err)
}

// attempts sends w, checked on the lease's latest revision being the
// tenure's latest record, until the server stores it or a refusal proves
// the tenure over. The leader's own renewals move the lease revision, and
// a server behind the stream may refuse a write the stream's leader takes,
// so a refusal is judged before it is believed (refusal.go).
func (s *State) attempts(ctx context.Context, st *store.Store, w Sender) (uint64, error) {
	var a writeAttempts
	for a.n = 1; ; a.n++ {
		epoch, rev, ready, err := s.attemptOn(ctx, &a)
		if err != nil {
			return 0, err
		}
		if !ready {
			continue // a renewal was in flight: it may have moved the lease
		}
		ack, err := w.Send(ctx, epoch, rev)
		if err == nil {
			return ack.Sequence, nil
		}
		if rev, done, err := s.answered(ctx, st, w, &a, err, epoch, rev); done {
			return rev, err
		}
	}
}

// writeAttempts is what the attempts of one fenced write have learned.
type writeAttempts struct {
	n     int    // the attempt under way, from 1
	first uint64 // the lease revision the first attempt was checked on: no copy lands before it
	// seenEpoch and seenRev: a newer lease record of this tenure that
	// the view has not recorded yet.
	seenEpoch int64
	seenRev   uint64
	refused   bool // a refusal showed the lease moved by this tenure's renewal
	behind    bool // a server behind the stream refused an attempt: a copy may land
}

// attemptOn is the tenure and lease revision the next attempt is checked
// on. ready is false after waiting for a renewal in flight: renewals go
// first, since this write would make the server refuse the renewal's
// check, and be refused itself.
func (s *State) attemptOn(ctx context.Context, a *writeAttempts) (epoch int64, rev uint64, ready bool, err error) {
	epoch, rev, ok := s.Node.Tenure()
	if !ok {
		return 0, 0, false, a.tenureEnded()
	}
	if a.seenEpoch == epoch && a.seenRev > rev {
		rev = a.seenRev
	}
	if renewing := s.Node.RenewalInFlight(); renewing != nil {
		select {
		case <-renewing:
			return 0, 0, false, nil
		case <-ctx.Done():
			return 0, 0, false, a.uncertain(ctx.Err())
		}
	}
	if a.first == 0 {
		a.first = rev
	}
	return epoch, rev, true, nil
}

// answered handles the error of an attempt checked on the lease record
// rev of the tenure at epoch: done with the write's revision or error, or
// not done (try again).
func (s *State) answered(ctx context.Context, st *store.Store, w Sender, a *writeAttempts, err error, epoch int64, rev uint64) (uint64, bool, error) {
	var apiErr *jetstream.APIError
	if !errors.As(err, &apiErr) {
		return 0, true, a.uncertain(st.Explain(err)) // no answer: it may have landed, like any NATS write
	}
	if a.n >= maxWriteAttempts {
		return 0, true, a.uncertain(fmt.Errorf("%d attempts: %w", maxWriteAttempts, st.Explain(err)))
	}
	switch apiErr.ErrorCode {
	case jetstream.JSErrCodeStreamWrongLastSequenceConstant, jsErrCodeDuplicateInProcess:
		// A replicated stream refuses a check on a subject with a write
		// in flight (a renewal sent before this write waited, or another
		// state write), and a copy of this write may be being stored:
		// the answer is not known yet, so ask again.
	case jsErrCodeBatchDuplicate:
		rev, err := s.landed(ctx, st, w, a.first)
		return rev, true, err
	case jetstream.JSErrCodeStreamWrongLastSequence:
		v, at, err := s.judge(ctx, st, w, apiErr, epoch, rev)
		if err != nil {
			return 0, true, err
		}
		if v == verdictRenewed {
			// The refusing server has a record newer than any this
			// write was checked on: it would have answered a copy
			// stored before it as a duplicate.
			a.refused, a.behind = true, false
			a.seenEpoch, a.seenRev = epoch, at
			return 0, false, nil
		}
		a.behind = true
	default:
		return 0, true, a.uncertain(err)
	}
	if err := store.Pause(ctx, a.n); err != nil {
		return 0, true, a.uncertain(err)
	}
	return 0, false, nil
}

// tenureEnded is the error of a write whose tenure ended between attempts.
func (a *writeAttempts) tenureEnded() error {
	switch {
	case a.behind:
		return fmt.Errorf("%w: %w: the tenure ended after a server behind the stream refused the write", ErrWriteUncertain, wire.ErrNotLeader)
	case a.refused:
		return fmt.Errorf("%w: %w: the tenure ended after the server refused the write", ErrFenced, wire.ErrNotLeader)
	}
	return wire.ErrNotLeader
}

// uncertain wraps err with ErrWriteUncertain when a copy may have landed.
func (a *writeAttempts) uncertain(err error) error {
	if a.behind {
		return fmt.Errorf("%w: %w", ErrWriteUncertain, err)
	}
	return err
}
