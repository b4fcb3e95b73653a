package fenced

// What a refused fenced write means. A server that answers "wrong last
// sequence" may be one that is behind the stream: a stream leader cut off
// from its peers answers from the messages it has until it steps down,
// while the write (or a copy of it held in a route) lands at the leader
// that replaced it. Only a refusal by a server that has stored a lease
// record later than the one the write was checked on proves that nothing
// of the write landed (docs/design.md §10).

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/store"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// Sender is a Put, a Delete or a Commit, as the fenced loop (Run) sees
// it: Single or Batch.
type Sender interface {
	// Send publishes one attempt, checked on the lease's latest revision
	// being rev. Every attempt carries the same message IDs, so the
	// server stores a write that lands twice once.
	Send(ctx context.Context, epoch int64, rev uint64) (*jetstream.PubAck, error)
	// Checked says which key of the write has the subject subj, and
	// the revision the write expects it at, when it checks one.
	Checked(subj string) (key string, rev uint64, ok bool)
	// Conflict reads every checked key from the stream's leader and
	// names one that is not at the revision expected; nil if none.
	Conflict(ctx context.Context) error
	// Last is the subject and message ID of the write's last message:
	// its revision is the write's.
	Last() (subject, msgID string)
}

// verdict is what a refusal of one attempt means for the next.
type verdict int

const (
	// verdictRenewed: this tenure's own renewal moved the lease; retry
	// on the newer record.
	verdictRenewed verdict = iota + 1
	// verdictBehind: the refusing server had not stored this tenure's
	// latest lease record (or a key at the revision expected): retry; a
	// copy may land elsewhere meanwhile.
	verdictBehind
)

// JetStream errors a fenced write meets (nats-server 2.12+).
const (
	// jsErrCodeDuplicateInProcess: a message with this ID is being
	// stored; its outcome is not known yet.
	jsErrCodeDuplicateInProcess jetstream.ErrorCode = 10158
	// jsErrCodeBatchDuplicate: an atomic batch holds a message whose ID
	// the stream has stored: an earlier copy of the Commit landed.
	jsErrCodeBatchDuplicate jetstream.ErrorCode = 10201
)

// refusedAt is the last sequence the refusing server had for the subject
// whose check failed ("wrong last sequence: N").
func refusedAt(apiErr *jetstream.APIError) (uint64, bool) {
	text, ok := strings.CutPrefix(apiErr.Description, "wrong last sequence: ")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(text, 10, 64)
	return n, err == nil
}

// judge says what a "wrong last sequence" refusal of an attempt checked on
// the lease record rev of the tenure at epoch means: a verdict to retry,
// or the write's final error (ErrFenced, ErrStateConflict).
func (s *State) judge(ctx context.Context, st *store.Store, w Sender, apiErr *jetstream.APIError, epoch int64, rev uint64) (verdict, uint64, error) {
	at, ok := refusedAt(apiErr)
	if !ok || at == 0 {
		return s.judgeByReading(ctx, st, w, epoch, rev)
	}
	m, err := streamMsgGet(ctx, st, msgGetRequest{Seq: at}, s.Timeout)
	if errors.Is(err, ErrKeyNotFound) {
		return s.judgeByReading(ctx, st, w, epoch, rev) // removed since, or a reader behind
	}
	if err != nil {
		return 0, 0, err
	}
	if m.Subject == wire.KVSubject(st.Bucket(), wire.LeaseKey) {
		switch {
		case at <= rev:
			return verdictBehind, 0, nil
		case s.ownLease(m.entry(), epoch):
			return verdictRenewed, at, nil
		}
		// The refusing server has stored a record of another tenure: it
		// would have answered a copy of this write that landed before
		// it as a duplicate (message IDs are checked first), and no
		// copy can land after it.
		return 0, 0, fmt.Errorf("%w: %w: the lease is at revision %d, not this tenure's (epoch %d, revision %d)",
			ErrFenced, wire.ErrNotLeader, at, epoch, rev)
	}
	if key, want, ok := w.Checked(m.Subject); ok {
		if at > want {
			return 0, 0, fmt.Errorf("%w: %q is at revision %d or later, expected %d", ErrStateConflict, key, at, want)
		}
		return verdictBehind, 0, nil
	}
	return s.judgeByReading(ctx, st, w, epoch, rev)
}

// judgeByReading judges a refusal that does not say where the subject it
// failed on stands, from the lease's latest record read from the stream's
// leader.
func (s *State) judgeByReading(ctx context.Context, st *store.Store, w Sender, epoch int64, rev uint64) (verdict, uint64, error) {
	ent, err := LastRecord(ctx, st, wire.LeaseKey, s.Timeout)
	if err != nil && !errors.Is(err, ErrKeyNotFound) {
		return 0, 0, err
	}
	switch {
	case ent == nil || ent.Revision < rev:
		// A reader behind, or the lease compacted away: the tenure ends
		// by expiry if its renewals fail too.
		return verdictBehind, 0, nil
	case ent.Revision > rev && s.ownLease(ent, epoch):
		return verdictRenewed, ent.Revision, nil
	case ent.Revision > rev:
		return 0, 0, fmt.Errorf("%w: %w: lease revision %d is not this tenure's (epoch %d, revision %d)",
			ErrFenced, wire.ErrNotLeader, ent.Revision, epoch, rev)
	}
	// The lease is at the revision the attempt was checked on: a key's
	// check failed, or the refusing server was behind.
	if err := w.Conflict(ctx); err != nil {
		return 0, 0, err
	}
	return verdictBehind, 0, nil
}

// ownLease says ent is a lease record of this node's tenure at epoch.
func (s *State) ownLease(ent *Entry, epoch int64) bool {
	if ent.Deleted {
		return false
	}
	l, err := wire.DecodeLease(ent.Value, ent.Revision)
	return err == nil && l.NodeID == s.NodeID && l.Epoch == epoch
}

// maxLandedScan bounds the messages landed reads on the last message's
// subject: the writes to one key since the tenure's lease record before
// the first attempt.
const maxLandedScan = 1000

// landed finds the revision of a Commit that the server reports stored
// already (an earlier copy landed): the first message on the write's last
// subject after from that carries its message ID.
func (s *State) landed(ctx context.Context, st *store.Store, w Sender, from uint64) (uint64, error) {
	subj, id := w.Last()
	seq := from + 1
	for range maxLandedScan {
		m, err := streamMsgGet(ctx, st, msgGetRequest{Seq: seq, NextBySubject: subj}, s.Timeout)
		if errors.Is(err, ErrKeyNotFound) {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("%w: stored already, reading its revision: %w", ErrWriteUncertain, err)
		}
		if m.Header.Get(jetstream.MsgIDHeader) == id {
			return m.Seq, nil
		}
		seq = m.Seq + 1
	}
	return 0, fmt.Errorf("%w: the server reports it stored already; its revision was not found after %d", ErrWriteUncertain, from)
}
