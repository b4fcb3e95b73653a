package cluster

// Atomic multi-key writes: a JetStream atomic batch, fenced on the lease
// like a single write.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// StateWrite is one write of a Commit: Value under Key, or its deletion.
type StateWrite struct {
	Key    string
	Value  []byte
	Delete bool
}

// MaxCommitWrites is the most writes one Commit takes (the server's
// default limit on an atomic batch is 1000).
const MaxCommitWrites = 1000

// JetStream's atomic batch headers (nats-server 2.12 or later).
const (
	batchIDHeader     = "Nats-Batch-Id"
	batchSeqHeader    = "Nats-Batch-Sequence"
	batchCommitHeader = "Nats-Batch-Commit"
)

// jsErrCodeAtomicPublishDisabled: the stream does not allow atomic batches.
const jsErrCodeAtomicPublishDisabled jetstream.ErrorCode = 10174

// Commit writes every one of writes, or none, fenced on the lease like
// Put: all of them land together while this node holds the lease, or
// nothing lands. It returns the revision of the last write. It needs
// nats-server 2.12 or later and a bucket that allows atomic batches (see
// EnableCommit); otherwise it fails with an error wrapping ErrBucketConfig.
// A key may appear once per Commit.
func (s *State) Commit(ctx context.Context, writes ...StateWrite) (uint64, error) {
	rev, err := s.commit(ctx, writes)
	if err != nil {
		return 0, fmt.Errorf("state commit: %w", err)
	}
	return rev, nil
}

func (s *State) commit(ctx context.Context, writes []StateWrite) (uint64, error) {
	if len(writes) == 0 || len(writes) > MaxCommitWrites {
		return 0, fmt.Errorf("%w: %d writes, 1 to %d", ErrInvalidConfig, len(writes), MaxCommitWrites)
	}
	seen := make(map[string]bool, len(writes))
	for _, w := range writes {
		if err := ValidateStateKey(w.Key); err != nil {
			return 0, err
		}
		if seen[w.Key] {
			return 0, fmt.Errorf("%w: %q written twice in one commit", ErrInvalidKey, w.Key)
		}
		seen[w.Key] = true
	}
	st, err := s.store()
	if err != nil {
		return 0, err
	}
	leaseSubject := kvSubject(st.bucket, leaseKey)
	rev, err := s.fenced(ctx, st, func(epoch int64, rev uint64) (*jetstream.PubAck, error) {
		return publishBatch(ctx, st, writes, epoch, rev, leaseSubject)
	})
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode == jsErrCodeAtomicPublishDisabled {
		return 0, fmt.Errorf("%w: bucket %q does not allow atomic batches (State.EnableCommit): %w", ErrBucketConfig, st.bucket, err)
	}
	return rev, err
}

// publishBatch sends writes as one atomic batch: every message but the
// last without a reply (the server answers the commit for the whole
// batch), the first carrying the lease precondition.
func publishBatch(ctx context.Context, st *store, writes []StateWrite, epoch int64, rev uint64, leaseSubject string) (*jetstream.PubAck, error) {
	id := strings.TrimPrefix(nats.NewInbox(), nats.InboxPrefix)
	epochText := strconv.FormatInt(epoch, 10)
	for i, w := range writes {
		msg := nats.NewMsg(kvSubject(st.bucket, stateKVKey(w.Key)))
		msg.Data = w.Value
		msg.Header.Set(StateEpochHeader, epochText)
		msg.Header.Set(batchIDHeader, id)
		msg.Header.Set(batchSeqHeader, strconv.Itoa(i+1))
		if w.Delete {
			msg.Header.Set("KV-Operation", "DEL")
		}
		if i == 0 {
			msg.Header.Set(jetstream.ExpectedLastSubjSeqSubjHeader, leaseSubject)
			msg.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(rev, 10))
		}
		if i < len(writes)-1 {
			if err := st.nc.PublishMsg(msg); err != nil {
				return nil, err
			}
			continue
		}
		msg.Header.Set(batchCommitHeader, "1")
		return st.js.PublishMsg(ctx, msg)
	}
	return nil, errors.New("empty batch") // not reached: commit checks len(writes)
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
	stream, err := st.js.Stream(ctx, kvStream(st.bucket))
	if err != nil {
		return fmt.Errorf("enable commit: %w", st.explain(err))
	}
	cfg := stream.CachedInfo().Config
	if cfg.AllowAtomicPublish {
		return nil
	}
	cfg.AllowAtomicPublish = true
	if _, err := st.js.UpdateStream(ctx, cfg); err != nil {
		return fmt.Errorf("enable commit: %w", st.explain(err))
	}
	return nil
}
