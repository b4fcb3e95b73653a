// Package state is a cluster's fenced state: keys in the cluster's bucket
// that every node reads and only the leader writes, with the NATS server
// itself refusing a write once the lease has moved. A node's State comes
// from cluster.Node.State:
//
//	st := node.State()
//	rev, err := st.Put(ctx, "config", []byte("v2"))
//	if errors.Is(err, state.ErrFenced) { /* the lease moved: nothing was written */ }
//
// The errors a write returns wrap this package's sentinels, or package
// cluster's (cluster.cluster.ErrNotLeader, cluster.ErrNotStarted,
// cluster.cluster.ErrStopped, cluster.cluster.ErrBucketConfig), or a context error. The
// write path, the refusal's judgement, the reads and the watch are in
// internal/fenced; docs/fenced-state.md is the guide.
package state

import (
	"context"
	"fmt"
	"time"

	"github.com/ozanturksever/go-cluster/internal/fenced"
)

// State is the cluster's replicated state: keys under "state." in the
// cluster's bucket. Every node, observers too, reads it; only the leader
// writes it, and every write is fenced on the lease by the NATS server.
//
// A key is one or more tokens of ASCII letters, digits, '-' and '_',
// separated by single dots ("config", "orders.42.status"), at most 255
// bytes: no wildcards, no empty tokens, so that a key is exactly one NATS
// subject. Any other key fails with an error wrapping ErrInvalidKey that
// names it.
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
// Every write carries the header "Go-Cluster-Epoch": the epoch of the
// tenure that wrote it, for any KV or stream client to read.
//
// Reads: Get asks the bucket stream's leader, which holds every write it
// has acknowledged, so a Get after a successful Put (on any node) sees it
// or a later value; only a stream leader cut off from its peers, until it
// steps down, could answer with less. Keys and Watch follow the stream with a consumer and
// may trail writes that are being acknowledged at that moment.
type State struct{ f *fenced.State }

// New is cluster.Node.State's: the State over a node's fenced state,
// which only this module can make. Applications call Node.State.
func New(f *fenced.State) *State { return &State{f} }

// Entry is the value of a state key.
type Entry struct {
	Key      string
	Value    []byte
	Revision uint64 // the bucket's revision (stream sequence) of this value
	// Epoch is the epoch of the tenure that wrote the value (from its
	// "Go-Cluster-Epoch" header); 0 when unknown: written by something
	// else than State, or delivered by Watch, whose entries do not carry
	// headers.
	Epoch   int64
	Created time.Time
	// Deleted marks a deletion delivered by Watch.
	Deleted bool
}

// Write is one write of a Commit: Value under Key, or its deletion,
// applied only if Expect holds.
type Write struct {
	Key    string
	Value  []byte
	Delete bool
	// Expect is a precondition on Key's latest revision (compare-and-set):
	// ExpectRevision or ExpectAbsent. The zero value checks nothing.
	Expect Expect
}

// Expect is what a Commit expects of a key before it writes it: the
// server checks it with the lease, and when it does not hold the whole
// Commit is refused with an error wrapping ErrConflict. The zero
// Expect expects nothing.
type Expect struct{ e fenced.Expect }

// ExpectRevision expects Key's latest revision to be rev: the Revision of
// an Entry that Get or Watch returned (a deletion has a revision too).
// Revision 0 means no value, as ExpectAbsent: so the Revision of the zero
// Entry that a Get of a missing key leaves suits a read-modify-write loop
// either way.
func ExpectRevision(rev uint64) Expect { return Expect{fenced.ExpectRevision(rev)} }

// ExpectAbsent expects Key to have no value: never written, or deleted
// (Get returns ErrKeyNotFound). It costs one read per key before the
// write: the server compares revisions, and a deleted key has one.
func ExpectAbsent() Expect { return Expect{fenced.ExpectAbsent()} }

// ErrInvalidCommit: a Commit's writes are not one atomic batch: none,
// more than 999, or a key twice. Nothing was sent; the wrapping message
// says which (and names the key).
var ErrInvalidCommit = fenced.ErrInvalidCommit

// ErrConflict: a Commit's precondition on a key (Write.Expect) did not
// hold when the server checked it. Nothing of the Commit was written; the
// wrapping message names the key. Unlike ErrFenced, the node may still
// lead.
var ErrConflict = fenced.ErrStateConflict

// ErrFenced: the NATS server refused a state write because the lease moved
// after this node's last record of it: another node took the lease, or it
// was released or changed. Nothing was written. The error also wraps
// cluster.cluster.ErrNotLeader.
var ErrFenced = fenced.ErrFenced

// ErrWriteUncertain: a fenced state write whose outcome is not known. It
// was sent, and a server behind the stream refused it (a stream leader cut
// off from its peers answers from its old copy until it steps down) before
// an answer that proves anything came; it may have landed, and if it did,
// it landed while this node's tenure held the lease. Read the key to know.
// Like a timeout, it is neither success nor ErrFenced (docs/design.md §10).
var ErrWriteUncertain = fenced.ErrWriteUncertain

// ErrInvalidKey: a state key is not one or more tokens of letters, digits,
// '-' and '_' separated by '.'. The wrapping message names the key.
var ErrInvalidKey = fenced.ErrInvalidKey

// ErrKeyNotFound: the state key has no value (never written, or deleted).
var ErrKeyNotFound = fenced.ErrKeyNotFound

// Put writes value under key and returns its revision. It fails with an
// error wrapping cluster.ErrNotLeader when this node does not lead, and with one
// wrapping ErrFenced (and cluster.ErrNotLeader) when the server refused the write
// because the lease moved; nothing was written then. ErrWriteUncertain, a
// timeout or a lost connection leave the outcome unknown: if the write
// landed, it landed during this node's tenure (docs/design.md §10). So
// does cluster.ErrStopped for a write in flight when the node's connection closed
// (Stop closes the connection it dialled); a write begun after Stop gets
// cluster.ErrStopped and sends nothing.
func (s *State) Put(ctx context.Context, key string, value []byte) (uint64, error) {
	rev, err := s.f.Put(ctx, key, value, false)
	if err != nil {
		return 0, fmt.Errorf("state put %q: %w", key, err)
	}
	return rev, nil
}

// Delete removes key (a deletion marker, as a KV Delete writes), with the
// same fencing and errors as Put.
func (s *State) Delete(ctx context.Context, key string) error {
	if _, err := s.f.Put(ctx, key, nil, true); err != nil {
		return fmt.Errorf("state delete %q: %w", key, err)
	}
	return nil
}

// Commit writes every one of writes, or none, fenced on the lease like
// Put: all of them land together while this node holds the lease and
// every write's Expect holds, or nothing lands. They are stored in order
// at consecutive revisions; it returns the last write's. A precondition
// that does not hold fails it with an error wrapping ErrConflict
// that names the key; a lease that moved, with ErrFenced. After
// ErrWriteUncertain or a timeout the outcome is unknown: if it landed, it
// landed whole, once, within this tenure. It needs
// nats-server 2.12 or later and a bucket that allows atomic batches (see
// EnableCommit); otherwise it fails with an error wrapping
// cluster.ErrBucketConfig. A compare-and-set of one key is a Commit of one write.
//
// A Commit takes at most 999 writes (the server takes 1000 messages in a
// batch, and a Commit whose every write has an Expect sends one more).
// Before anything is sent, writes are checked: a Commit of no writes, of
// more than 999, or with a key twice (a key may appear once per Commit)
// fails with an error wrapping ErrInvalidCommit that says which; a key
// that is not a state key, with one wrapping ErrInvalidKey that names it.
// Nothing is written then.
func (s *State) Commit(ctx context.Context, writes ...Write) (uint64, error) {
	ws := make([]fenced.Write, len(writes))
	for i, w := range writes {
		ws[i] = fenced.Write{Key: w.Key, Value: w.Value, Delete: w.Delete, Expect: w.Expect.e}
	}
	rev, err := s.f.Commit(ctx, ws)
	if err != nil {
		return 0, fmt.Errorf("state commit: %w", err)
	}
	return rev, nil
}

// EnableCommit lets the cluster's bucket take atomic batches (the stream
// setting AllowAtomicPublish), which Commit needs. It needs nats-server
// 2.12 or later and permission to update the bucket's stream
// ($JS.API.STREAM.UPDATE.KV_cluster-<id>); run it once, from any node.
func (s *State) EnableCommit(ctx context.Context) error {
	if err := s.f.EnableCommit(ctx); err != nil {
		return fmt.Errorf("enable commit: %w", err)
	}
	return nil
}

// Get reads key through the bucket stream's leader. A KV Get may be
// answered by any replica (direct get) and trail the latest writes; this
// read goes to the one server that acknowledged them, so it returns the
// latest value of every write acknowledged before it was sent. It fails
// with an error wrapping ErrKeyNotFound when the key has no value.
func (s *State) Get(ctx context.Context, key string) (Entry, error) {
	if err := fenced.ValidateKey(key); err != nil {
		return Entry{}, fmt.Errorf("state get: %w", err)
	}
	ent, err := s.f.Get(ctx, key)
	if err != nil {
		return Entry{}, fmt.Errorf("state get %q: %w", key, err)
	}
	return Entry(ent), nil
}

// Keys returns, sorted, the state keys that are prefix or below it
// ("orders" matches "orders" and "orders.42", not "orders2"); every key
// when prefix is "". It reads through a consumer and may miss writes
// being acknowledged at that moment.
func (s *State) Keys(ctx context.Context, prefix string) ([]string, error) {
	if err := validPrefix(prefix); err != nil {
		return nil, fmt.Errorf("state keys: %w", err)
	}
	keys, err := s.f.Keys(ctx, prefix)
	if err != nil {
		return nil, fmt.Errorf("state keys: %w", err)
	}
	return keys, nil
}

// Watcher delivers the values of state keys: first the current value of
// every key watched, then each change as it is stored.
type Watcher struct {
	updates <-chan Entry
	synced  <-chan struct{}
}

// Updates delivers the entries. It is closed when the watch's ctx ends.
// Entries have no Epoch (a consumer delivers no headers here): Get the key
// for it.
func (w *Watcher) Updates() <-chan Entry { return w.updates }

// Synced is closed once the current values have all been delivered: every
// entry received before it is a current value (keys deleted before the
// watch began are not delivered), every later one a change.
func (w *Watcher) Synced() <-chan struct{} { return w.synced }

// Watch follows the state keys that are prefix or below it (every key when
// prefix is ""), until ctx ends. Like Keys it may trail the latest writes
// a little; deletions arrive as entries with Deleted set.
func (s *State) Watch(ctx context.Context, prefix string) (*Watcher, error) {
	if err := validPrefix(prefix); err != nil {
		return nil, fmt.Errorf("state watch: %w", err)
	}
	updates, synced, err := fenced.Watch(ctx, s.f, prefix, func(e fenced.Entry) Entry { return Entry(e) })
	if err != nil {
		return nil, fmt.Errorf("state watch: %w", err)
	}
	return &Watcher{updates: updates, synced: synced}, nil
}

// validPrefix checks the prefix of Keys and Watch: "" or a key.
func validPrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	return fenced.ValidateKey(prefix)
}

// WriteOutcome classifies one fenced state write (Put, Delete, Commit),
// for metrics: a cluster.Metrics that also has the method
// ObserveStateWrite(outcome WriteOutcome) is told how every write that
// was tried ended, on the writer's goroutine. Writes refused before they
// are tried (an invalid key, a node not started or stopped) are not
// reported.
type WriteOutcome string

// The outcomes of a fenced write.
const (
	WriteOK        WriteOutcome = fenced.OutcomeOK        // the server stored it
	WriteFenced    WriteOutcome = fenced.OutcomeFenced    // the server refused it: the lease had moved (ErrFenced)
	WriteNotLeader WriteOutcome = fenced.OutcomeNotLeader // refused locally: this node's tenure had ended (cluster.ErrNotLeader)
	WriteConflict  WriteOutcome = fenced.OutcomeConflict  // a Commit's Expect did not hold (ErrConflict)
	WriteUncertain WriteOutcome = fenced.OutcomeUncertain // refused by a server behind the stream; it may have landed (ErrWriteUncertain)
	WriteError     WriteOutcome = fenced.OutcomeError     // any other failure (a timeout: it may have landed)
)
