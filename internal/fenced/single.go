package fenced

import (
	"context"
	"strconv"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
	"github.com/ozanturksever/go-cluster/internal/store"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// Single is one Put or Delete. One message ID serves every attempt:
// nats.go resends a publish that met no responders, a server behind the
// stream may refuse an attempt whose copy lands elsewhere, and the
// server's duplicate window (2 minutes on a KV bucket) answers a copy
// that landed already with its revision instead of storing it twice.
type Single struct {
	Store        *store.Store // where it is sent
	Subject      string       // the key's subject (Subject)
	Value        []byte
	Delete       bool   // a deletion marker
	LeaseSubject string // the subject whose last sequence is checked
	MsgID        string // of every attempt
}

// NewSingle is the write of value under key (its deletion when del) to
// st's bucket, with a new message ID.
func NewSingle(st *store.Store, key string, value []byte, del bool) *Single {
	return &Single{Store: st, Subject: Subject(st.Bucket(), key), Value: value, Delete: del,
		LeaseSubject: wire.KVSubject(st.Bucket(), wire.LeaseKey), MsgID: nuid.Next()}
}

// Send publishes one attempt (Sender).
func (w *Single) Send(ctx context.Context, epoch int64, rev uint64) (*jetstream.PubAck, error) {
	return w.Store.JetStream().PublishMsg(ctx, fencedMsg(w.Store.API().PublishSubject(w.Subject), w.Value, w.Delete, epoch, rev, w.LeaseSubject, w.MsgID))
}

// Checked says the write checks no key (Sender).
func (w *Single) Checked(string) (string, uint64, bool) { return "", 0, false }

// Conflict is nil: no key is checked (Sender).
func (w *Single) Conflict(context.Context) error { return nil }

// Last is the write's subject and message ID (Sender).
func (w *Single) Last() (string, string) { return w.Subject, w.MsgID }

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
	h[EpochHeader] = vals[0:1:1]
	h[jetstream.ExpectedLastSubjSeqHeader] = vals[1:2:2]
	h[jetstream.ExpectedLastSubjSeqSubjHeader] = vals[2:3:3]
	h[jetstream.MsgIDHeader] = vals[3:4:4]
	if del {
		h[kvOperationHeader] = vals[4:5:5]
	}
	return &nats.Msg{Subject: subject, Data: value, Header: h}
}
