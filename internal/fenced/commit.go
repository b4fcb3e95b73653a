package fenced

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

// Write is one write of a Commit (cluster.StateWrite): Value under Key,
// or its deletion, applied only if Expect holds.
type Write struct {
	Key    string
	Value  []byte
	Delete bool
	Expect Expect // the zero value checks nothing
}

// Expect is a precondition on a key's latest revision (cluster.StateExpect).
type Expect struct {
	Rev uint64 // 0: no value
	Set bool   // false: no check
}

// ExpectRevision expects the key's latest revision to be rev; 0 is no value.
func ExpectRevision(rev uint64) Expect { return Expect{Rev: rev, Set: true} }

// ExpectAbsent expects the key to have no value: never written, or deleted.
func ExpectAbsent() Expect { return ExpectRevision(0) }

// MaxCommitWrites is the most writes one Commit takes (the server's
// default limit on an atomic batch is 1000; a Commit whose every write has
// an Expect sends one message more).
const MaxCommitWrites = 999

// CommitFenceKey is the bucket key of the message that carries a Commit's
// lease precondition when every write carries a precondition of its own
// (a message checks one subject): a deletion marker, which KV clients
// list as no key, of which the bucket keeps its history's worth. It has
// no '.', so it meets no state key, and is not "lease" or "cooldown-…".
const CommitFenceKey = "commit-fence"

// JetStream's atomic batch headers (nats-server 2.12 or later).
const (
	BatchIDHeader     = "Nats-Batch-Id"       // the batch's ID, on every message
	BatchSeqHeader    = "Nats-Batch-Sequence" // the message's place in the batch, from 1
	BatchCommitHeader = "Nats-Batch-Commit"   // on the last message: store the batch
)

// jsErrCodeAtomicPublishDisabled: the stream does not allow atomic batches.
const jsErrCodeAtomicPublishDisabled jetstream.ErrorCode = 10174

// Commit writes every one of writes, or none, fenced on the lease like
// Put, and returns the last write's revision. writes are checked first
// (CheckCommit); nothing is sent when they fail.
func (s *State) Commit(ctx context.Context, writes []Write) (uint64, error) {
	if err := CheckCommit(writes); err != nil {
		return 0, err
	}
	st, err := s.Node.Store()
	if err != nil {
		return 0, err
	}
	b := NewBatch(st, writes, s.Timeout)
	return s.CommitWith(ctx, st, b, b)
}

// CheckCommit checks writes before anything is sent: 1 to MaxCommitWrites
// writes (ErrInvalidCommit), each key valid (ErrInvalidKey), none twice
// (ErrInvalidCommit).
func CheckCommit(writes []Write) error {
	switch {
	case len(writes) == 0:
		return fmt.Errorf("%w: no writes; 1 to %d allowed", ErrInvalidCommit, MaxCommitWrites)
	case len(writes) > MaxCommitWrites:
		return fmt.Errorf("%w: %d writes; at most %d allowed", ErrInvalidCommit, len(writes), MaxCommitWrites)
	}
	seen := make(map[string]bool, len(writes))
	for i, w := range writes {
		if err := ValidateKey(w.Key); err != nil {
			return err
		}
		if seen[w.Key] {
			return fmt.Errorf("%w: key %q written twice (write %d); a key may appear once per commit", ErrInvalidCommit, w.Key, i+1)
		}
		seen[w.Key] = true
	}
	return nil
}

// CommitWith sends the batch b through w (b itself, but for tests) and
// returns the revision of its last write.
func (s *State) CommitWith(ctx context.Context, st *store.Store, w Sender, b *Batch) (uint64, error) {
	rev, err := s.Run(ctx, st, w)
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode == jsErrCodeAtomicPublishDisabled {
		return 0, fmt.Errorf("%w: bucket %q does not allow atomic batches (State.EnableCommit): %w", wire.ErrBucketConfig, st.Bucket(), err)
	}
	if err != nil {
		return 0, err
	}
	if b.fence != "" {
		rev-- // the marker's revision follows the last write's
	}
	return rev, nil
}

// Batch is a Commit's messages, and the revisions the server is to check.
type Batch struct {
	writes   []Write
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
	resolved bool          // the revisions of keys expected absent are read
	Store    *store.Store  // where it is sent
	timeout  time.Duration // of each read
}

// NewBatch is the batch of writes to st's bucket, with a new ID; timeout
// bounds each read of a key it checks.
func NewBatch(st *store.Store, writes []Write, timeout time.Duration) *Batch {
	b := &Batch{writes: writes, subjects: make([]string, len(writes)), expect: make([]uint64, len(writes)),
		lease: wire.KVSubject(st.Bucket(), wire.LeaseKey), id: nuid.Next(), Store: st, timeout: timeout}
	for i, w := range writes {
		b.subjects[i] = Subject(st.Bucket(), w.Key)
		if w.Expect.Set {
			b.expect[i] = w.Expect.Rev
			b.nChecked++
		}
	}
	if b.nChecked == len(writes) {
		b.fence = wire.KVSubject(st.Bucket(), CommitFenceKey)
	}
	return b
}

// Send is one attempt of the Commit (Sender).
//
// Keys expected absent are read before the first attempt only: a later
// attempt may follow a copy of this Commit that landed, which the server
// answers as a duplicate before it checks a key, and reading the key
// again would find the Commit's own value and call it a conflict.
func (b *Batch) Send(ctx context.Context, epoch int64, rev uint64) (*jetstream.PubAck, error) {
	if !b.resolved {
		if err := b.resolveAbsent(ctx); err != nil {
			return nil, err
		}
		b.resolved = true
	}
	return b.Publish(ctx, epoch, rev)
}

// Checked is the key of the write on subj and its expected revision, if
// it has an Expect (Sender).
func (b *Batch) Checked(subj string) (string, uint64, bool) {
	for i, w := range b.writes {
		if b.subjects[i] != subj {
			continue
		}
		if w.Expect.Set {
			return w.Key, b.expect[i], true
		}
	}
	return "", 0, false
}

// Last is the subject and message ID of the batch's last message (Sender).
func (b *Batch) Last() (string, string) {
	n := len(b.writes)
	if b.fence != "" {
		return b.fence, b.msgID(n)
	}
	return b.subjects[n-1], b.msgID(n - 1)
}

// msgID is the message ID of the batch's message i (from 0).
func (b *Batch) msgID(i int) string { return b.id + "." + strconv.Itoa(i) }

// resolveAbsent sets the revision to check for each write that expects no
// value: 0 for a key never written, else its deletion's revision. A key
// with a value is a conflict, found without sending anything.
func (b *Batch) resolveAbsent(ctx context.Context) error {
	for i, w := range b.writes {
		if w.Expect != ExpectAbsent() {
			continue
		}
		ent, err := LastRecord(ctx, b.Store, KVKey(w.Key), b.timeout)
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

// Publish sends the batch: every message but the last without a reply
// (the server answers the commit for the whole batch). Each write with an
// Expect carries its check (a message may carry one); the first write
// without one carries the lease check, or when there is none, a deletion
// marker of CommitFenceKey at the end does. The server checks every
// message when the last arrives and stores all of them or none.
func (b *Batch) Publish(ctx context.Context, epoch int64, rev uint64) (*jetstream.PubAck, error) {
	st := b.Store
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
			if checked = w.Expect.Set; checked {
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
		h[EpochHeader] = epochVal
		h[BatchIDHeader] = batchVal
		h[jetstream.MsgIDHeader] = []string{b.msgID(i)}
		h[BatchSeqHeader] = []string{strconv.Itoa(i + 1)}
		if i < n-1 {
			if err := st.Conn().PublishMsg(msg); err != nil {
				return nil, err
			}
			continue
		}
		h[BatchCommitHeader] = []string{"1"}
		return st.JetStream().PublishMsg(ctx, msg)
	}
	return nil, errors.New("empty batch") // not reached: commit checks len(writes)
}

// Conflict names the write whose precondition failed, once the server has
// refused the batch on a last subject sequence and the lease is known to
// be still this tenure's at the revision the batch checked (so a write's
// check failed). It returns nil if every key is at the revision checked
// (not expected: revisions only grow).
func (b *Batch) Conflict(ctx context.Context) error {
	for i, w := range b.writes {
		if !w.Expect.Set {
			continue
		}
		var now uint64
		ent, err := LastRecord(ctx, b.Store, KVKey(w.Key), b.timeout)
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
