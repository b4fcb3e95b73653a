package sim

import (
	"time"

	"github.com/ozanturksever/go-cluster/internal/election"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// kv models the bucket's stream as far as the lease key goes: one stream
// sequence for every write (other keys only bump it), the key's kept
// revisions (History 8), compare-and-swap, create as a compare-and-swap on
// revision 0, delete and purge markers, compaction, the stream's info
// (its creation time, first sequence, TTL metadata and last sequence),
// and the bucket deleted (for a while, or for good) and created again
// with a new identity. Its first sequence is its creation time in µs on
// its creator's clock, as the library creates a bucket (first_seq,
// docs/design.md §2.1): revisions name their incarnation.
type kv struct {
	inc     uint64        // the stream's identity; a new bucket has a new one
	created time.Duration // when this incarnation was created (simulated real time)
	// createdAt is the creation time as the creating server's clock read
	// it: the stream's Created, from which a node takes the bucket's
	// epoch base (docs/design.md §2.1).
	createdAt time.Time
	firstSeq  uint64             // the stream's first_seq
	seq       uint64             // last sequence of the stream
	entries   []election.KVEntry // the lease key's kept revisions, oldest first
	history   int
	deleted   bool // the bucket does not exist: every request says so
	// ttl and maxTTL are the bucket's TTL metadata (lease_ttl and
	// lease_ttl_max); a bucket created again keeps them
	// (docs/design.md §2.7's assumption).
	ttl, maxTTL time.Duration
}

func newKV(now time.Duration, firstSeq bool) *kv {
	k := &kv{inc: 1, created: now, createdAt: base.Add(now), history: 8}
	k.start(firstSeq)
	return k
}

// start empties the stream, its sequences from its first: its creation
// time in µs, or 1 (firstSeq false: Options.NoFirstSeq).
func (k *kv) start(firstSeq bool) {
	k.firstSeq = 1
	if firstSeq {
		k.firstSeq = uint64(k.createdAt.UnixMicro())
	}
	k.seq, k.entries = k.firstSeq-1, nil
}

// info is the stream's info as a Confirm reads it at now: its identity,
// metadata, last sequence and age.
func (k *kv) info(now time.Duration) election.Incarnation {
	b := election.Incarnation{Created: k.createdAt, FirstSeq: k.firstSeq, Protocol: wire.Protocol, LeaseTTL: k.ttl, MaxTTL: k.maxTTL,
		LastSeq: k.seq, Age: now - k.created}
	if k.firstSeq <= 1 {
		b.EpochBase = k.createdAt.UnixMicro() - 1 // Options.NoFirstSeq: a bucket made by hand, then rebased
	}
	return b
}

func (k *kv) last() (election.KVEntry, bool) {
	if len(k.entries) == 0 {
		return election.KVEntry{}, false
	}
	return k.entries[len(k.entries)-1], true
}

func (k *kv) append(op election.Op, value []byte) uint64 {
	k.seq++
	e := election.KVEntry{Rev: k.seq, Op: op, Value: value}
	if op == election.Purge {
		k.entries = nil
	}
	k.entries = append(k.entries, e)
	if len(k.entries) > k.history {
		k.entries = append([]election.KVEntry(nil), k.entries[len(k.entries)-k.history:]...)
	}
	return e.Rev
}

// create writes value only if the key has no entry at all, a marker
// included: the driver's Create expects the key's last sequence 0, unlike
// nats.go's KeyValue.Create, which writes over a marker.
func (k *kv) create(value []byte) (uint64, bool) {
	if _, ok := k.last(); ok {
		return 0, false
	}
	return k.append(election.Put, value), true
}

// update writes value only if the key's last revision is rev.
func (k *kv) update(value []byte, rev uint64) (uint64, bool) {
	if l, ok := k.last(); !ok || l.Rev != rev {
		return 0, false
	}
	return k.append(election.Put, value), true
}

// after returns the first kept entry above rev.
func (k *kv) after(rev uint64) (election.KVEntry, bool) {
	for _, e := range k.entries {
		if e.Rev > rev {
			return e, true
		}
	}
	return election.KVEntry{}, false
}

// compact removes the key without a trace if its last entry is a marker
// (purge-deletes); a key written again since keeps its entries.
func (k *kv) compact() {
	if l, ok := k.last(); ok && l.Op != election.Put {
		k.entries = nil
	}
}

// rawPurge removes every entry of the key from the stream, as a purge of
// the stream by subject does: no marker is written, and the stream's
// last sequence stays.
func (k *kv) rawPurge() { k.entries = nil }

// remove deletes the bucket: its stream and every entry go.
func (k *kv) remove() {
	k.deleted, k.seq, k.entries = true, 0, nil
}

// recreate creates the bucket again (deleting it first if it exists): a
// new stream, with a new identity, created at clock on its creator's
// clock.
func (k *kv) recreate(now time.Duration, clock time.Time, firstSeq bool) {
	k.inc++
	k.created, k.createdAt, k.deleted = now, clock, false
	k.start(firstSeq)
}
