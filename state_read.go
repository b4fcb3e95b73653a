package cluster

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

// Get reads key through the bucket stream's leader. A KV Get may be
// answered by any replica (direct get) and trail the latest writes; this
// read goes to the one server that acknowledged them, so it returns the
// latest value of every write acknowledged before it was sent. It fails
// with an error wrapping ErrKeyNotFound when the key has no value.
func (s *State) Get(ctx context.Context, key string) (StateEntry, error) {
	if err := ValidateStateKey(key); err != nil {
		return StateEntry{}, fmt.Errorf("state get: %w", err)
	}
	st, err := s.store()
	if err != nil {
		return StateEntry{}, fmt.Errorf("state get %q: %w", key, err)
	}
	ent, err := getLatest(ctx, st, stateKVKey(key), s.timeout)
	if err != nil {
		return StateEntry{}, fmt.Errorf("state get %q: %w", key, err)
	}
	ent.Key = key
	return *ent, nil
}

// Keys returns, sorted, the state keys that are prefix or below it
// ("orders" matches "orders" and "orders.42", not "orders2"); every key
// when prefix is "". It reads through a consumer and may miss writes
// being acknowledged at that moment.
func (s *State) Keys(ctx context.Context, prefix string) ([]string, error) {
	if prefix != "" {
		if err := ValidateStateKey(prefix); err != nil {
			return nil, fmt.Errorf("state keys: %w", err)
		}
	}
	st, err := s.store()
	if err != nil {
		return nil, fmt.Errorf("state keys: %w", err)
	}
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lister, err := st.KV().ListKeysFiltered(lctx, stateFilters(prefix)...)
	if err != nil {
		return nil, fmt.Errorf("state keys: %w", st.Explain(err))
	}
	var keys []string
	for {
		select {
		case k, ok := <-lister.Keys():
			if !ok {
				if err := ctx.Err(); err != nil {
					return nil, fmt.Errorf("state keys: %w", err)
				}
				slices.Sort(keys)
				return slices.Compact(keys), nil
			}
			keys = append(keys, strings.TrimPrefix(k, stateKeyPrefix))
		case <-ctx.Done():
			return nil, fmt.Errorf("state keys: %w", ctx.Err())
		}
	}
}

// StateWatch delivers the values of state keys: first the current value
// of every key watched, then each change as it is stored.
type StateWatch struct {
	updates chan StateEntry
	synced  chan struct{}
}

// Updates delivers the entries. It is closed when the watch's ctx ends.
// Entries have no Epoch (a consumer delivers no headers here): Get the key
// for it.
func (w *StateWatch) Updates() <-chan StateEntry { return w.updates }

// Synced is closed once the current values have all been delivered: every
// entry received before it is a current value (keys deleted before the
// watch began are not delivered), every later one a change.
func (w *StateWatch) Synced() <-chan struct{} { return w.synced }

// Watch follows the state keys that are prefix or below it (every key when
// prefix is ""), until ctx ends. Like Keys it may trail the latest writes
// a little; deletions arrive as entries with Deleted set.
func (s *State) Watch(ctx context.Context, prefix string) (*StateWatch, error) {
	if prefix != "" {
		if err := ValidateStateKey(prefix); err != nil {
			return nil, fmt.Errorf("state watch: %w", err)
		}
	}
	st, err := s.store()
	if err != nil {
		return nil, fmt.Errorf("state watch: %w", err)
	}
	wctx, cancel := context.WithCancel(ctx)
	kw, err := st.KV().WatchFiltered(wctx, stateFilters(prefix))
	if err != nil {
		cancel()
		return nil, fmt.Errorf("state watch: %w", st.Explain(err))
	}
	w := &StateWatch{updates: make(chan StateEntry), synced: make(chan struct{})}
	go func() {
		defer close(w.updates)
		defer cancel()
		defer func() { _ = kw.Stop() }()
		synced := false
		for {
			select {
			case e, ok := <-kw.Updates():
				if !ok {
					return
				}
				if e == nil {
					synced = true
					close(w.synced)
					continue
				}
				if !synced && e.Operation() != jetstream.KeyValuePut {
					continue // a key deleted before the watch began: not a current value
				}
				out := StateEntry{Key: strings.TrimPrefix(e.Key(), stateKeyPrefix), Value: e.Value(),
					Revision: e.Revision(), Created: e.Created(), Deleted: e.Operation() != jetstream.KeyValuePut}
				select {
				case w.updates <- out:
				case <-wctx.Done():
					return
				}
			case <-wctx.Done():
				return
			}
		}
	}()
	return w, nil
}

// msgGetResponse is the stream API's answer to a message get.
type msgGetResponse struct {
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
func getLatest(ctx context.Context, st *store.Store, bucketKey string, timeout time.Duration) (*StateEntry, error) {
	ent, err := lastRecord(ctx, st, bucketKey, timeout)
	if err != nil {
		return nil, err
	}
	if ent.Deleted {
		return nil, ErrKeyNotFound
	}
	return ent, nil
}

// lastRecord is getLatest with deletions: the key's latest message, a
// value or a deletion (Deleted set: deleted, purged or aged out), or
// ErrKeyNotFound when the stream holds none. Its Revision is what the
// server compares an expected last subject sequence with.
func lastRecord(ctx context.Context, st *store.Store, bucketKey string, timeout time.Duration) (*StateEntry, error) {
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

// entry is the message as a StateEntry without its Key.
func (m *streamMsg) entry() *StateEntry {
	ent := &StateEntry{Value: m.Data, Revision: m.Seq, Created: m.Time}
	if m.Header != nil {
		ent.Deleted = m.Header.Get(kvOperationHeader) != "" || m.Header.Get(jetstream.MarkerReasonHeader) != ""
		ent.Epoch, _ = strconv.ParseInt(m.Header.Get(StateEpochHeader), 10, 64)
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
	var resp msgGetResponse
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
