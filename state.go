package cluster

// Fenced state: keys in the cluster's bucket that only the leader writes,
// with the NATS server itself refusing a write once the lease has moved.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
)

// State is the cluster's replicated state: keys under "state." in the
// cluster's bucket. Every node, observers too, reads it; only the leader
// writes it, and every write is fenced on the lease by the NATS server.
//
// The guarantee: a write that returns success was accepted while this
// node held the lease, and a write by a node that has lost the lease is
// never accepted. Each write carries a precondition the server checks
// before storing it: the latest record of the lease key is still the one
// this node's tenure last wrote (JetStream's expected last sequence for
// the lease subject). Any write to the lease by anyone else (a successor
// taking over, a release, an operator's delete) makes the server refuse
// every later write of the old tenure; nothing of it lands. A write that
// fails with a timeout (or ErrWriteUncertain) may or may not have landed,
// like any NATS write, but if it did, it landed before the lease moved.
// Every attempt of a write carries one message ID, so it lands once.
//
// Reads: Get asks the bucket stream's leader, which holds every write it
// has acknowledged, so a Get after a successful Put (on any node) sees it
// or a later value; only a stream leader cut off from its peers, until it
// steps down, could answer with less. Keys and Watch follow the stream with a consumer and
// may trail writes that are being acknowledged at that moment.
type State struct {
	n *Node
}

// StateEntry is the value of a state key.
type StateEntry struct {
	Key      string
	Value    []byte
	Revision uint64 // the bucket's revision (stream sequence) of this value
	// Epoch is the epoch of the tenure that wrote the value (from
	// StateEpochHeader); 0 when unknown: written by something else than
	// State, or delivered by Watch, whose entries do not carry headers.
	Epoch   int64
	Created time.Time
	// Deleted marks a deletion delivered by Watch.
	Deleted bool
}

// Put writes value under key and returns its revision. It fails with an
// error wrapping ErrNotLeader when this node does not lead, and with one
// wrapping ErrFenced (and ErrNotLeader) when the server refused the write
// because the lease moved; nothing was written then. ErrWriteUncertain, a
// timeout or a lost connection leave the outcome unknown: if the write
// landed, it landed during this node's tenure (docs/design.md §10). So
// does ErrStopped for a write in flight when the node's connection closed
// (Stop closes the connection it dialled); a write begun after Stop gets
// ErrStopped and sends nothing.
func (s *State) Put(ctx context.Context, key string, value []byte) (uint64, error) {
	rev, err := s.write(ctx, key, value, false)
	if err != nil {
		return 0, fmt.Errorf("state put %q: %w", key, err)
	}
	return rev, nil
}

// Delete removes key (a deletion marker, as a KV Delete writes), with the
// same fencing and errors as Put.
func (s *State) Delete(ctx context.Context, key string) error {
	if _, err := s.write(ctx, key, nil, true); err != nil {
		return fmt.Errorf("state delete %q: %w", key, err)
	}
	return nil
}

// store is the started node's bucket, or why there is none.
func (s *State) store() (*store, error) {
	n := s.n
	n.mu.Lock()
	defer n.mu.Unlock()
	switch {
	case !n.started:
		return nil, ErrNotStarted
	case n.stopped:
		return nil, ErrStopped
	case n.el == nil:
		return nil, ErrNotStarted // Start in progress
	}
	return n.el.store, nil
}

// maxWriteAttempts bounds the retries of one write; each needs the lease
// moved by this node's own renewal, or a write in flight on the lease.
const maxWriteAttempts = 100

// write publishes one fenced state write.
func (s *State) write(ctx context.Context, key string, value []byte, del bool) (uint64, error) {
	if err := ValidateStateKey(key); err != nil {
		return 0, err
	}
	st, err := s.store()
	if err != nil {
		return 0, err
	}
	w := &putWrite{st: st, subject: stateSubject(st.bucket, key), value: value, del: del,
		leaseSubject: kvSubject(st.bucket, leaseKey), msgID: nuid.Next()}
	return s.fenced(ctx, st, w)
}

// putWrite is one Put or Delete. One message ID serves every attempt:
// nats.go resends a publish that met no responders, a server behind the
// stream may refuse an attempt whose copy lands elsewhere, and the
// server's duplicate window (2 minutes on a KV bucket) answers a copy
// that landed already with its revision instead of storing it twice.
type putWrite struct {
	st           *store
	subject      string
	value        []byte
	del          bool
	leaseSubject string
	msgID        string
}

func (w *putWrite) send(ctx context.Context, epoch int64, rev uint64) (*jetstream.PubAck, error) {
	return w.st.js.PublishMsg(ctx, fencedMsg(w.st.api.publishSubject(w.subject), w.value, w.del, epoch, rev, w.leaseSubject, w.msgID))
}

func (w *putWrite) checked(string) (string, uint64, bool) { return "", 0, false }
func (w *putWrite) conflict(context.Context) error        { return nil }
func (w *putWrite) last() (string, string)                { return w.subject, w.msgID }

// fencedMsg is the message of one attempt of a state write. Its headers
// are set here rather than through PublishOpts (an allocation for each,
// and the revision formatted twice), from one string holding both numbers
// and one slice holding every value: a write is a few allocations fewer.
func fencedMsg(subject string, value []byte, del bool, epoch int64, leaseRev uint64, leaseSubject, msgID string) *nats.Msg {
	var buf [40]byte
	nums := strconv.AppendInt(buf[:0], epoch, 10)
	n := len(nums)
	numText := string(strconv.AppendUint(nums, leaseRev, 10))
	vals := []string{numText[:n], numText[n:], leaseSubject, msgID, "DEL"}
	h := make(nats.Header, 5)
	h[StateEpochHeader] = vals[0:1:1]
	h[jetstream.ExpectedLastSubjSeqHeader] = vals[1:2:2]
	h[jetstream.ExpectedLastSubjSeqSubjHeader] = vals[2:3:3]
	h[jetstream.MsgIDHeader] = vals[3:4:4]
	if del {
		h[kvOperationHeader] = vals[4:5:5]
	}
	return &nats.Msg{Subject: subject, Data: value, Header: h}
}

// fenced runs the attempts of w and reports the outcome to the metrics.
func (s *State) fenced(ctx context.Context, st *store, w fencedWrite) (uint64, error) {
	rev, err := s.fencedAttempts(ctx, st, w)
	err = closedUnder(st, err)
	observeStateWrite(s.n.cfg.Metrics, err)
	return rev, err
}

// closedUnder wraps with ErrStopped the error of a write whose answer was
// lost because the node's connection closed: Stop closes the connection
// the node dialled, and a shared one that the application closes stops
// the node. Like a timeout, it leaves the write's outcome unknown.
func closedUnder(st *store, err error) error {
	if err == nil || errors.Is(err, ErrStopped) || !errors.Is(err, nats.ErrConnectionClosed) || !st.nc.IsClosed() {
		return err
	}
	return fmt.Errorf("%w: the connection closed with the write in flight (its outcome is unknown): %w", ErrStopped, err)
}

// fencedAttempts sends w, checked on the lease's latest revision being the
// tenure's latest record, until the server stores it or a refusal proves
// the tenure over. The leader's own renewals move the lease revision, and
// a server behind the stream may refuse a write the stream's leader takes,
// so a refusal is judged before it is believed (state_refusal.go).
func (s *State) fencedAttempts(ctx context.Context, st *store, w fencedWrite) (uint64, error) {
	var a writeAttempts
	for a.n = 1; ; a.n++ {
		epoch, rev, ready, err := s.attemptOn(ctx, &a)
		if err != nil {
			return 0, err
		}
		if !ready {
			continue // a renewal was in flight: it may have moved the lease
		}
		ack, err := w.send(ctx, epoch, rev)
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
	epoch, rev, ok := s.n.view.tenure(time.Now())
	if !ok {
		return 0, 0, false, a.tenureEnded()
	}
	if a.seenEpoch == epoch && a.seenRev > rev {
		rev = a.seenRev
	}
	if renewing := s.n.view.renewalInFlight(); renewing != nil {
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
func (s *State) answered(ctx context.Context, st *store, w fencedWrite, a *writeAttempts, err error, epoch int64, rev uint64) (uint64, bool, error) {
	var apiErr *jetstream.APIError
	if !errors.As(err, &apiErr) {
		return 0, true, a.uncertain(st.explain(err)) // no answer: it may have landed, like any NATS write
	}
	if a.n >= maxWriteAttempts {
		return 0, true, a.uncertain(fmt.Errorf("%d attempts: %w", maxWriteAttempts, st.explain(err)))
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
	if err := pause(ctx, a.n); err != nil {
		return 0, true, a.uncertain(err)
	}
	return 0, false, nil
}

// tenureEnded is the error of a write whose tenure ended between attempts.
func (a *writeAttempts) tenureEnded() error {
	switch {
	case a.behind:
		return fmt.Errorf("%w: %w: the tenure ended after a server behind the stream refused the write", ErrWriteUncertain, ErrNotLeader)
	case a.refused:
		return fmt.Errorf("%w: %w: the tenure ended after the server refused the write", ErrFenced, ErrNotLeader)
	}
	return ErrNotLeader
}

// uncertain wraps err with ErrWriteUncertain when a copy may have landed.
func (a *writeAttempts) uncertain(err error) error {
	if a.behind {
		return fmt.Errorf("%w: %w", ErrWriteUncertain, err)
	}
	return err
}

// pause waits a little longer on each attempt, at most 20ms.
func pause(ctx context.Context, attempt int) error {
	d := min(time.Duration(attempt)*200*time.Microsecond, 20*time.Millisecond)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
