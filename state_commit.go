package cluster

// Atomic multi-key writes: a JetStream atomic batch, fenced on the lease
// like a single write.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
	"github.com/ozanturksever/go-cluster/internal/store"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// StateWrite is one write of a Commit: Value under Key, or its deletion,
// applied only if Expect holds.
type StateWrite struct {
	Key    string
	Value  []byte
	Delete bool
	// Expect is a precondition on Key's latest revision (compare-and-set):
	// ExpectRevision or ExpectAbsent. The zero value checks nothing.
	Expect StateExpect
}

// StateExpect is what a Commit expects of a key before it writes it: the
// server checks it with the lease, and when it does not hold the whole
// Commit is refused with an error wrapping ErrStateConflict. The zero
// StateExpect expects nothing.
type StateExpect struct {
	rev uint64 // 0: no value
	set bool   // false in the zero value: no check
}

// ExpectRevision expects Key's latest revision to be rev: the Revision of
// a StateEntry that Get or Watch returned (a deletion has a revision too).
// Revision 0 means no value, as ExpectAbsent: so the Revision of the zero
// StateEntry that a Get of a missing key leaves suits a
// read-modify-write loop either way.
func ExpectRevision(rev uint64) StateExpect { return StateExpect{rev: rev, set: true} }

// ExpectAbsent expects Key to have no value: never written, or deleted
// (Get returns ErrKeyNotFound). It costs one read per key before the
// write: the server compares revisions, and a deleted key has one.
func ExpectAbsent() StateExpect { return ExpectRevision(0) }

// revision is the revision expected and whether one is.
func (e StateExpect) revision() (uint64, bool) { return e.rev, e.set }

// ErrInvalidCommit: a Commit's writes are not one atomic batch: none,
// more than MaxCommitWrites, or a key twice. Nothing was sent; the
// wrapping message says which (and names the key).
var ErrInvalidCommit = errors.New("cluster: invalid commit")

// ErrStateConflict: a Commit's precondition on a key (StateWrite.Expect)
// did not hold when the server checked it. Nothing of the Commit was
// written; the wrapping message names the key. Unlike ErrFenced, the node
// may still lead.
var ErrStateConflict = errors.New("cluster: state conflict")

// MaxCommitWrites is the most writes one Commit takes (the server's
// default limit on an atomic batch is 1000; a Commit whose every write has
// an Expect sends one message more).
const MaxCommitWrites = 999

// commitFenceKey is the bucket key of the message that carries a Commit's
// lease precondition when every write carries a precondition of its own
// (a message checks one subject): a deletion marker, which KV clients
// list as no key, of which the bucket keeps its history's worth. It has
// no '.', so it meets no state key, and is not "lease" or "cooldown-…".
const commitFenceKey = "commit-fence"

// JetStream's atomic batch headers (nats-server 2.12 or later).
const (
	batchIDHeader     = "Nats-Batch-Id"
	batchSeqHeader    = "Nats-Batch-Sequence"
	batchCommitHeader = "Nats-Batch-Commit"
)

// jsErrCodeAtomicPublishDisabled: the stream does not allow atomic batches.
const jsErrCodeAtomicPublishDisabled jetstream.ErrorCode = 10174

// Commit writes every one of writes, or none, fenced on the lease like
// Put: all of them land together while this node holds the lease and
// every write's Expect holds, or nothing lands. They are stored in order
// at consecutive revisions; it returns the last write's. A precondition
// that does not hold fails it with an error wrapping ErrStateConflict
// that names the key; a lease that moved, with ErrFenced. After
// ErrWriteUncertain or a timeout the outcome is unknown: if it landed, it
// landed whole, once, within this tenure. It needs
// nats-server 2.12 or later and a bucket that allows atomic batches (see
// EnableCommit); otherwise it fails with an error wrapping
// ErrBucketConfig. A compare-and-set of one key is a Commit of one write.
//
// Before anything is sent, writes are checked: a Commit of no writes, of
// more than MaxCommitWrites, or with a key twice (a key may appear once
// per Commit) fails with an error wrapping ErrInvalidCommit that says
// which; a key that is not a state key, with one wrapping ErrInvalidKey
// that names it. Nothing is written then.
func (s *State) Commit(ctx context.Context, writes ...StateWrite) (uint64, error) {
	rev, err := s.commit(ctx, writes)
	if err != nil {
		return 0, fmt.Errorf("state commit: %w", err)
	}
	return rev, nil
}

func (s *State) commit(ctx context.Context, writes []StateWrite) (uint64, error) {
	if err := checkCommit(writes); err != nil {
		return 0, err
	}
	st, err := s.store()
	if err != nil {
		return 0, err
	}
	b := newBatch(st, writes, s.timeout)
	return s.commitWith(ctx, st, b, b)
}

// checkCommit checks writes before anything is sent: 1 to MaxCommitWrites
// writes (ErrInvalidCommit), each key valid (ErrInvalidKey), none twice
// (ErrInvalidCommit).
func checkCommit(writes []StateWrite) error {
	switch {
	case len(writes) == 0:
		return fmt.Errorf("%w: no writes; 1 to %d allowed", ErrInvalidCommit, MaxCommitWrites)
	case len(writes) > MaxCommitWrites:
		return fmt.Errorf("%w: %d writes; at most %d allowed (MaxCommitWrites)", ErrInvalidCommit, len(writes), MaxCommitWrites)
	}
	seen := make(map[string]bool, len(writes))
	for i, w := range writes {
		if err := ValidateStateKey(w.Key); err != nil {
			return err
		}
		if seen[w.Key] {
			return fmt.Errorf("%w: key %q written twice (write %d); a key may appear once per commit", ErrInvalidCommit, w.Key, i+1)
		}
		seen[w.Key] = true
	}
	return nil
}

// commitWith sends the batch b through w (b itself, but for tests) and
// returns the revision of its last write.
func (s *State) commitWith(ctx context.Context, st *store.Store, w fencedWrite, b *batch) (uint64, error) {
	rev, err := s.fenced(ctx, st, w)
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode == jsErrCodeAtomicPublishDisabled {
		return 0, fmt.Errorf("%w: bucket %q does not allow atomic batches (State.EnableCommit): %w", ErrBucketConfig, st.Bucket(), err)
	}
	if err != nil {
		return 0, err
	}
	if b.fence != "" {
		rev-- // the marker's revision follows the last write's
	}
	return rev, nil
}

// batch is a Commit's messages, and the revisions the server is to check.
type batch struct {
	writes   []StateWrite
	subjects []string // of writes[i]
	// expect[i] is the last subject sequence sent for writes[i] when it
	// has an Expect: its revision, or for "no value" the revision of the
	// key's deletion if it has one (resolveAbsent).
	expect   []uint64
	nChecked int    // writes with an Expect
	fence    string // the subject of the message carrying the lease check when no write can
	lease    string // the lease's subject
	// id is the Commit's: message i of every attempt has the ID id.i,
	// so that a copy that landed already is answered as one (each
	// attempt is a new batch).
	id       string
	resolved bool // the revisions of keys expected absent are read
	st       *store.Store
	timeout  time.Duration // of each read
}

func newBatch(st *store.Store, writes []StateWrite, timeout time.Duration) *batch {
	b := &batch{writes: writes, subjects: make([]string, len(writes)), expect: make([]uint64, len(writes)),
		lease: wire.KVSubject(st.Bucket(), wire.LeaseKey), id: nuid.Next(), st: st, timeout: timeout}
	for i, w := range writes {
		b.subjects[i] = stateSubject(st.Bucket(), w.Key)
		if rev, ok := w.Expect.revision(); ok {
			b.expect[i] = rev
			b.nChecked++
		}
	}
	if b.nChecked == len(writes) {
		b.fence = wire.KVSubject(st.Bucket(), commitFenceKey)
	}
	return b
}

// send is one attempt of the Commit (fencedWrite).
//
// Keys expected absent are read before the first attempt only: a later
// attempt may follow a copy of this Commit that landed, which the server
// answers as a duplicate before it checks a key, and reading the key
// again would find the Commit's own value and call it a conflict.
func (b *batch) send(ctx context.Context, epoch int64, rev uint64) (*jetstream.PubAck, error) {
	if !b.resolved {
		if err := b.resolveAbsent(ctx); err != nil {
			return nil, err
		}
		b.resolved = true
	}
	return b.publish(ctx, epoch, rev)
}

// checked is the key of the write on subj and its expected revision, if
// it has an Expect.
func (b *batch) checked(subj string) (string, uint64, bool) {
	for i, w := range b.writes {
		if b.subjects[i] != subj {
			continue
		}
		if _, ok := w.Expect.revision(); ok {
			return w.Key, b.expect[i], true
		}
	}
	return "", 0, false
}

// last is the subject and message ID of the batch's last message.
func (b *batch) last() (string, string) {
	n := len(b.writes)
	if b.fence != "" {
		return b.fence, b.msgID(n)
	}
	return b.subjects[n-1], b.msgID(n - 1)
}

// msgID is the message ID of the batch's message i (from 0).
func (b *batch) msgID(i int) string { return b.id + "." + strconv.Itoa(i) }

// resolveAbsent sets the revision to check for each write that expects no
// value: 0 for a key never written, else its deletion's revision. A key
// with a value is a conflict, found without sending anything.
func (b *batch) resolveAbsent(ctx context.Context) error {
	for i, w := range b.writes {
		if w.Expect != ExpectAbsent() {
			continue
		}
		ent, err := lastRecord(ctx, b.st, stateKVKey(w.Key), b.timeout)
		switch {
		case errors.Is(err, ErrKeyNotFound):
			b.expect[i] = 0
		case err != nil:
			return fmt.Errorf("reading %q for its precondition: %w", w.Key, err)
		case !ent.Deleted:
			return fmt.Errorf("%w: %q has a value (revision %d), expected none", ErrStateConflict, w.Key, ent.Revision)
		default:
			b.expect[i] = ent.Revision
		}
	}
	return nil
}

// publish sends the batch: every message but the last without a reply
// (the server answers the commit for the whole batch). Each write with an
// Expect carries its check (a message may carry one); the first write
// without one carries the lease check, or when there is none, a deletion
// marker of commitFenceKey at the end does. The server checks every
// message when the last arrives and stores all of them or none.
func (b *batch) publish(ctx context.Context, epoch int64, rev uint64) (*jetstream.PubAck, error) {
	st := b.st
	// Header values every message shares are made once: nats.go only
	// reads them.
	epochVal := []string{strconv.FormatInt(epoch, 10)}
	batchVal := []string{nuid.Next()}
	leaseVal, leaseRevVal := []string{b.lease}, []string{strconv.FormatUint(rev, 10)}
	delVal := []string{"DEL"}
	n := len(b.writes)
	if b.fence != "" {
		n++
	}
	leaseCarried := false
	for i := range n {
		h := make(nats.Header, 7)
		msg := &nats.Msg{Header: h}
		checked := false // the message carries its key's check
		if i < len(b.writes) {
			w := b.writes[i]
			msg.Subject, msg.Data = st.API().PublishSubject(b.subjects[i]), w.Value
			if w.Delete {
				h[kvOperationHeader] = delVal
			}
			if _, checked = w.Expect.revision(); checked {
				h[jetstream.ExpectedLastSubjSeqHeader] = []string{strconv.FormatUint(b.expect[i], 10)}
			}
		} else {
			msg.Subject = st.API().PublishSubject(b.fence)
			h[kvOperationHeader] = delVal
		}
		if !checked && !leaseCarried {
			h[jetstream.ExpectedLastSubjSeqSubjHeader] = leaseVal
			h[jetstream.ExpectedLastSubjSeqHeader] = leaseRevVal
			leaseCarried = true
		}
		h[StateEpochHeader] = epochVal
		h[batchIDHeader] = batchVal
		h[jetstream.MsgIDHeader] = []string{b.msgID(i)}
		h[batchSeqHeader] = []string{strconv.Itoa(i + 1)}
		if i < n-1 {
			if err := st.Conn().PublishMsg(msg); err != nil {
				return nil, err
			}
			continue
		}
		h[batchCommitHeader] = []string{"1"}
		return st.JetStream().PublishMsg(ctx, msg)
	}
	return nil, errors.New("empty batch") // not reached: commit checks len(writes)
}

// conflict names the write whose precondition failed, once the server has
// refused the batch on a last subject sequence and the lease is known to
// be still this tenure's at the revision the batch checked (so a write's
// check failed). It returns nil if every key is at the revision checked
// (not expected: revisions only grow).
func (b *batch) conflict(ctx context.Context) error {
	for i, w := range b.writes {
		if _, ok := w.Expect.revision(); !ok {
			continue
		}
		var now uint64
		ent, err := lastRecord(ctx, b.st, stateKVKey(w.Key), b.timeout)
		switch {
		case errors.Is(err, ErrKeyNotFound):
		case err != nil:
			return fmt.Errorf("%w: a key was not at the revision expected (reading %q: %v)", ErrStateConflict, w.Key, err)
		default:
			now = ent.Revision
		}
		if now == b.expect[i] {
			continue
		}
		if w.Expect == ExpectAbsent() {
			return fmt.Errorf("%w: %q changed (revision %d) after it was read with no value (revision %d)",
				ErrStateConflict, w.Key, now, b.expect[i])
		}
		return fmt.Errorf("%w: %q is at revision %d, expected %d", ErrStateConflict, w.Key, now, b.expect[i])
	}
	return nil
}

// EnableCommit lets the cluster's bucket take atomic batches (the stream
// setting AllowAtomicPublish), which Commit needs. It needs nats-server
// 2.12 or later and permission to update the bucket's stream
// ($JS.API.STREAM.UPDATE.KV_cluster-<id>); run it once, from any node.
func (s *State) EnableCommit(ctx context.Context) error {
	st, err := s.store()
	if err != nil {
		return fmt.Errorf("enable commit: %w", err)
	}
	stream, err := st.JetStream().Stream(ctx, wire.KVStream(st.Bucket()))
	if err != nil {
		return fmt.Errorf("enable commit: %w", st.Explain(err))
	}
	cfg := stream.CachedInfo().Config
	if cfg.AllowAtomicPublish {
		return nil
	}
	cfg.AllowAtomicPublish = true
	if _, err := st.JetStream().UpdateStream(ctx, cfg); err != nil {
		return fmt.Errorf("enable commit: %w", st.Explain(err))
	}
	return nil
}
