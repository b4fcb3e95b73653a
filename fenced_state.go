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
// fails with a timeout may or may not have landed, like any NATS write,
// but if it did, it landed before the lease moved.
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
// because the lease moved; nothing was written then.
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
	subject := stateSubject(st.bucket, key)
	leaseSubject := kvSubject(st.bucket, leaseKey)
	// One message ID for every attempt of this write: nats.go resends a
	// publish that met no responders (a stream leader cut off from the
	// server the client is on), and the first copy may have been stored
	// already; the server's duplicate window (2 minutes on a KV bucket)
	// then answers the resend with the first copy's revision instead of
	// storing the value twice. A refused attempt stores nothing, so the
	// next one may reuse the ID.
	msgID := nuid.Next()
	return s.fenced(ctx, st, nil, func(epoch int64, rev uint64) (*jetstream.PubAck, error) {
		return st.js.PublishMsg(ctx, fencedMsg(subject, value, del, epoch, rev, leaseSubject, msgID))
	})
}

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

// fenced runs send, which publishes with the precondition that the lease's
// latest revision is rev, the revision of the tenure's latest lease
// record, and reports the outcome to the metrics. When send carries
// preconditions on other keys too, conflict says which failed after a
// refusal that the lease does not explain; it is nil otherwise.
func (s *State) fenced(ctx context.Context, st *store, conflict func(context.Context) error, send func(epoch int64, rev uint64) (*jetstream.PubAck, error)) (uint64, error) {
	rev, err := s.fencedAttempts(ctx, st, conflict, send)
	observeStateWrite(s.n.cfg.Metrics, err)
	return rev, err
}

// fencedAttempts is fenced without the metrics. The leader's own renewals
// move the lease revision, so a refusal is retried while this node still
// leads and the lease's latest record is still its own.
func (s *State) fencedAttempts(ctx context.Context, st *store, conflict func(context.Context) error, send func(epoch int64, rev uint64) (*jetstream.PubAck, error)) (uint64, error) {
	var seen struct { // a newer lease record of ours that the view has not recorded yet
		epoch int64
		rev   uint64
	}
	refused := false // the server has refused an attempt: the lease moved
	for attempt := 1; ; attempt++ {
		epoch, rev, ok := s.n.view.tenure(time.Now())
		if !ok && refused {
			return 0, fmt.Errorf("%w: %w: the tenure ended after the server refused the write", ErrFenced, ErrNotLeader)
		}
		if !ok {
			return 0, ErrNotLeader
		}
		if seen.epoch == epoch && seen.rev > rev {
			rev = seen.rev
		}
		if renewing := s.n.view.renewalInFlight(); renewing != nil {
			// Renewals first: this write would make the server refuse
			// the renewal's check, and it would be refused itself.
			select {
			case <-renewing:
				continue // the renewal may have moved the lease revision
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		}
		ack, err := send(epoch, rev)
		if err == nil {
			return ack.Sequence, nil
		}
		var apiErr *jetstream.APIError
		if !errors.As(err, &apiErr) || attempt >= maxWriteAttempts {
			return 0, st.explain(err)
		}
		switch apiErr.ErrorCode {
		case jetstream.JSErrCodeStreamWrongLastSequenceConstant:
			// A replicated stream refuses a check on a subject with a
			// write in flight (a renewal sent before this write waited,
			// or another state write): the answer is not known yet, so
			// ask again.
			if err := pause(ctx, attempt); err != nil {
				return 0, err
			}
		case jetstream.JSErrCodeStreamWrongLastSequence:
			refused = true
			if _, now, ok := s.n.view.tenure(time.Now()); ok && now != rev {
				continue // a renewal moved the lease: retry with its revision
			}
			// The view may not have recorded a renewal that has landed:
			// the lease's latest record tells whether it is still ours.
			ent, gerr := getLatest(ctx, st, leaseKey, s.n.cfg.RequestTimeout)
			if gerr != nil && !errors.Is(gerr, ErrKeyNotFound) {
				return 0, gerr
			}
			if conflict != nil && ent != nil && ent.Revision == rev && s.ownRecord(ent, epoch) {
				// The lease check held: a key's did not.
				if err := conflict(ctx); err != nil {
					return 0, err
				}
			}
			if ent == nil || ent.Revision <= rev || !s.ownRecord(ent, epoch) {
				return 0, fmt.Errorf("%w: %w: lease revision %d is not this tenure's (epoch %d, revision %d)",
					ErrFenced, ErrNotLeader, leaseRevision(ent), epoch, rev)
			}
			seen.epoch, seen.rev = epoch, ent.Revision
		default:
			return 0, err
		}
	}
}

// ownRecord says ent is a lease record of this node's tenure at epoch.
func (s *State) ownRecord(ent *StateEntry, epoch int64) bool {
	l, err := decodeLease(ent.Value, ent.Revision)
	return err == nil && l.NodeID == s.n.cfg.NodeID && l.Epoch == epoch
}

func leaseRevision(ent *StateEntry) uint64 {
	if ent == nil {
		return 0
	}
	return ent.Revision
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
