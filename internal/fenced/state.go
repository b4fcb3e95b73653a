package fenced

import (
	"context"
	"time"

	"github.com/ozanturksever/go-cluster/internal/store"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// Node is all the fenced state reaches of its node: the bucket once the
// node has started, the node's tenure as its view records it, and where
// write outcomes go. Package cluster implements it, so that this package
// depends on neither the node's lock nor its lifecycle fields.
type Node interface {
	// Store is the started node's bucket, or why there is none
	// (ErrNotStarted, ErrStopped of package cluster).
	Store() (*store.Store, error)
	// Tenure is the epoch and latest lease revision of this node's live
	// tenure now, on the clock the node decides by; ok is false when the
	// node does not lead (docs/design.md §3.3).
	Tenure() (epoch int64, rev uint64, ok bool)
	// RenewalInFlight is closed when the renewal in flight ends, nil
	// when none is: fenced writes let renewals go first.
	RenewalInFlight() <-chan struct{}
	// ObserveWrite is told how each write that was tried ended (an
	// Outcome* constant).
	ObserveWrite(outcome string)
}

// State is one node's fenced state.
type State struct {
	Node    Node
	NodeID  string        // whose lease records are this tenure's
	Timeout time.Duration // of each read of the stream when ctx has no deadline
}

// Put writes value under key (a deletion marker when del) and returns its
// revision: the key is checked (ErrInvalidKey), then the write is fenced
// on the lease (Run).
func (s *State) Put(ctx context.Context, key string, value []byte, del bool) (uint64, error) {
	if err := ValidateKey(key); err != nil {
		return 0, err
	}
	st, err := s.Node.Store()
	if err != nil {
		return 0, err
	}
	return s.Run(ctx, st, NewSingle(st, key, value, del))
}

// EnableCommit lets the cluster's bucket take atomic batches (the stream
// setting AllowAtomicPublish), which Commit needs.
func (s *State) EnableCommit(ctx context.Context) error {
	st, err := s.Node.Store()
	if err != nil {
		return err
	}
	stream, err := st.JetStream().Stream(ctx, wire.KVStream(st.Bucket()))
	if err != nil {
		return st.Explain(err)
	}
	cfg := stream.CachedInfo().Config
	if cfg.AllowAtomicPublish {
		return nil
	}
	cfg.AllowAtomicPublish = true
	if _, err := st.JetStream().UpdateStream(ctx, cfg); err != nil {
		return st.Explain(err)
	}
	return nil
}
