package cluster

// Fenced state: keys in the cluster's bucket that only the leader writes,
// with the NATS server itself refusing a write once the lease has moved.

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
	"github.com/ozanturksever/go-cluster/internal/store"
	"github.com/ozanturksever/go-cluster/internal/wire"
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
	host    stateHost     // the node, reached through what State needs of it
	nodeID  string        // Config.NodeID: whose lease records are this tenure's
	timeout time.Duration // Config.RequestTimeout, for reads of the stream
	metrics Metrics       // Config.Metrics
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
func (s *State) store() (*store.Store, error) { return s.host.stateStore() }

// write publishes one fenced state write.
func (s *State) write(ctx context.Context, key string, value []byte, del bool) (uint64, error) {
	if err := ValidateStateKey(key); err != nil {
		return 0, err
	}
	st, err := s.store()
	if err != nil {
		return 0, err
	}
	w := &putWrite{st: st, subject: stateSubject(st.Bucket(), key), value: value, del: del,
		leaseSubject: wire.KVSubject(st.Bucket(), wire.LeaseKey), msgID: nuid.Next()}
	return s.fenced(ctx, st, w)
}

// putWrite is one Put or Delete. One message ID serves every attempt:
// nats.go resends a publish that met no responders, a server behind the
// stream may refuse an attempt whose copy lands elsewhere, and the
// server's duplicate window (2 minutes on a KV bucket) answers a copy
// that landed already with its revision instead of storing it twice.
type putWrite struct {
	st           *store.Store
	subject      string
	value        []byte
	del          bool
	leaseSubject string
	msgID        string
}

func (w *putWrite) send(ctx context.Context, epoch int64, rev uint64) (*jetstream.PubAck, error) {
	return w.st.JetStream().PublishMsg(ctx, fencedMsg(w.st.API().PublishSubject(w.subject), w.value, w.del, epoch, rev, w.leaseSubject, w.msgID))
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

// stateHost is all State reaches of its node: the bucket once the node
// has started, and the node's tenure as its view records it. *Node
// implements it, so that State depends on neither the node's lock nor its
// lifecycle fields.
type stateHost interface {
	// stateStore is the started node's bucket, or why there is none
	// (ErrNotStarted, ErrStopped).
	stateStore() (*store.Store, error)
	// tenure is the epoch and latest lease revision of this node's live
	// tenure at now; ok is false when the node does not lead (docs/design.md §3.3).
	tenure(now time.Time) (epoch int64, rev uint64, ok bool)
	// renewalInFlight is closed when the renewal in flight ends, nil when
	// none is: fenced writes let renewals go first.
	renewalInFlight() <-chan struct{}
}

func (n *Node) stateStore() (*store.Store, error) {
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
	return n.el.Store(), nil
}

func (n *Node) tenure(now time.Time) (int64, uint64, bool) { return n.view.Fence(now) }

func (n *Node) renewalInFlight() <-chan struct{} { return n.view.RenewalInFlight() }
