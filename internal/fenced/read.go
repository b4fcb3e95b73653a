package fenced

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/store"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// Entry is the value of a state key (cluster.StateEntry, which has the
// same fields).
type Entry struct {
	Key      string
	Value    []byte
	Revision uint64 // the bucket's revision (stream sequence) of this value
	Epoch    int64  // from EpochHeader; 0 when unknown
	Created  time.Time
	Deleted  bool // a deletion delivered by Watch
}

// Get reads the valid state key key through the bucket stream's leader:
// the latest value of every write acknowledged before it was sent, or
// ErrKeyNotFound.
func (s *State) Get(ctx context.Context, key string) (Entry, error) {
	st, err := s.Node.Store()
	if err != nil {
		return Entry{}, err
	}
	ent, err := getLatest(ctx, st, KVKey(key), s.Timeout)
	if err != nil {
		return Entry{}, err
	}
	ent.Key = key
	return *ent, nil
}

// Keys returns, sorted, the state keys that are prefix (a valid key) or
// below it; every key when prefix is "". It reads through a consumer.
func (s *State) Keys(ctx context.Context, prefix string) ([]string, error) {
	st, err := s.Node.Store()
	if err != nil {
		return nil, err
	}
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lister, err := st.KV().ListKeysFiltered(lctx, filters(prefix)...)
	if err != nil {
		return nil, st.Explain(err)
	}
	var keys []string
	for {
		select {
		case k, ok := <-lister.Keys():
			if !ok {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				slices.Sort(keys)
				return slices.Compact(keys), nil
			}
			keys = append(keys, strings.TrimPrefix(k, KeyPrefix))
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// MsgGetResponse is the stream API's answer to a message get.
type MsgGetResponse struct {
	Error   *jetstream.APIError `json:"error,omitempty"`
	Message *struct {
		Subject  string    `json:"subject"`
		Sequence uint64    `json:"seq"`
		Header   []byte    `json:"hdrs,omitempty"`
		Data     []byte    `json:"data,omitempty"`
		Time     time.Time `json:"time"`
	} `json:"message,omitempty"`
}

// getLatest reads the latest value of a bucket key from the stream's
// leader ($JS.API.STREAM.MSG.GET, which only the leader answers, unlike
// the direct get a KV Get uses). A deletion is ErrKeyNotFound. timeout
// bounds the request when ctx has no deadline.
func getLatest(ctx context.Context, st *store.Store, bucketKey string, timeout time.Duration) (*Entry, error) {
	ent, err := LastRecord(ctx, st, bucketKey, timeout)
	if err != nil {
		return nil, err
	}
	if ent.Deleted {
		return nil, ErrKeyNotFound
	}
	return ent, nil
}

// LastRecord is getLatest with deletions: the key's latest message, a
// value or a deletion (Deleted set: deleted, purged or aged out), or
// ErrKeyNotFound when the stream holds none. Its Revision is what the
// server compares an expected last subject sequence with.
func LastRecord(ctx context.Context, st *store.Store, bucketKey string, timeout time.Duration) (*Entry, error) {
	m, err := streamMsgGet(ctx, st, msgGetRequest{LastBySubject: wire.KVSubject(st.Bucket(), bucketKey)}, timeout)
	if err != nil {
		return nil, err
	}
	ent := m.entry()
	ent.Key = bucketKey
	return ent, nil
}

// msgGetRequest asks the stream's leader for one message: the one at Seq,
// the first at or after Seq on NextBySubject, or the last on
// LastBySubject.
type msgGetRequest struct {
	Seq           uint64 `json:"seq,omitempty"`
	NextBySubject string `json:"next_by_subj,omitempty"`
	LastBySubject string `json:"last_by_subj,omitempty"`
}

// streamMsg is one message of the bucket's stream, headers decoded.
type streamMsg struct {
	Subject string
	Seq     uint64
	Header  nats.Header
	Data    []byte
	Time    time.Time
}

// entry is the message as an Entry without its Key.
func (m *streamMsg) entry() *Entry {
	ent := &Entry{Value: m.Data, Revision: m.Seq, Created: m.Time}
	if m.Header != nil {
		ent.Deleted = m.Header.Get(kvOperationHeader) != "" || m.Header.Get(jetstream.MarkerReasonHeader) != ""
		ent.Epoch, _ = strconv.ParseInt(m.Header.Get(EpochHeader), 10, 64)
	}
	return ent
}

// streamMsgGet sends req to the bucket stream's leader
// ($JS.API.STREAM.MSG.GET, which only the leader answers, unlike the
// direct get a KV Get uses). No such message is ErrKeyNotFound. timeout
// bounds the request when ctx has no deadline.
func streamMsgGet(ctx context.Context, st *store.Store, req msgGetRequest, timeout time.Duration) (*streamMsg, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	reply, err := st.Conn().RequestWithContext(ctx, st.API().Prefix()+"STREAM.MSG.GET."+wire.KVStream(st.Bucket()), body)
	if err != nil {
		return nil, st.Explain(err)
	}
	var resp MsgGetResponse
	if err := json.Unmarshal(reply.Data, &resp); err != nil {
		return nil, fmt.Errorf("message get: %w", err)
	}
	if resp.Error != nil {
		if resp.Error.ErrorCode == jetstream.JSErrCodeMessageNotFound {
			return nil, ErrKeyNotFound
		}
		return nil, st.Explain(resp.Error)
	}
	m := resp.Message
	if m == nil {
		return nil, errors.New("message get: empty answer")
	}
	out := &streamMsg{Subject: m.Subject, Seq: m.Sequence, Data: m.Data, Time: m.Time}
	if len(m.Header) > 0 {
		hdr, err := nats.DecodeHeadersMsg(m.Header)
		if err != nil {
			return nil, fmt.Errorf("message get: %w", err)
		}
		out.Header = hdr
	}
	return out, nil
}
