package sim

import (
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/election"
)

func TestKVCompareAndSwap(t *testing.T) {
	k := newKV(0, false)
	if _, ok := k.update([]byte("a"), 0); ok {
		t.Fatal("update of an absent key: written, want a conflict")
	}
	rev, ok := k.create([]byte("a"))
	if !ok || rev != 1 {
		t.Fatalf("create: rev %d ok %v", rev, ok)
	}
	if _, ok := k.create([]byte("b")); ok {
		t.Fatal("create over a value: written, want a conflict")
	}
	if _, ok := k.update([]byte("b"), 0); ok {
		t.Fatal("update on a stale revision: written, want a conflict")
	}
	k.seq++ // a write to another key of the stream
	if rev, ok := k.update([]byte("b"), 1); !ok || rev != 3 {
		t.Fatalf("update: rev %d ok %v, want 3", rev, ok)
	}
}

// Create expects the key's last sequence 0: refused over a marker.
func TestKVCreateRefusesAMarker(t *testing.T) {
	k := newKV(0, false)
	k.create([]byte("a"))
	k.append(election.Delete, nil)
	if _, ok := k.create([]byte("b")); ok {
		t.Fatal("create over a delete marker: written, want a conflict")
	}
	if rev, ok := k.update([]byte("b"), 2); !ok || rev != 3 {
		t.Fatalf("update over the marker: rev %d ok %v", rev, ok)
	}
}

func TestKVPurgeCompactRecreate(t *testing.T) {
	k := newKV(0, false)
	for i := 0; i < 10; i++ {
		k.append(election.Put, []byte("v"))
	}
	if h := k.entries; len(h) != 8 || h[0].Rev != 3 {
		t.Fatalf("history keeps %d entries from %d, want 8 from 3", len(h), h[0].Rev)
	}
	k.append(election.Purge, nil)
	if h := k.entries; len(h) != 1 || h[0].Op != election.Purge {
		t.Fatalf("after a purge the history is %v, want the marker alone", h)
	}
	k.update([]byte("floor"), 11)
	k.compact()
	if _, ok := k.last(); !ok {
		t.Fatal("compaction removed a key written again after its purge")
	}
	k.append(election.Purge, nil)
	k.compact()
	if _, ok := k.last(); ok || k.seq != 13 {
		t.Fatalf("compaction left the key, or changed the sequence (%d)", k.seq)
	}
	if e, ok := k.after(0); ok {
		t.Fatalf("a compacted key shows %v", e)
	}
	inc := k.inc
	k.remove()
	if _, ok := k.last(); ok || !k.deleted || k.inc != inc {
		t.Fatal("a deleted bucket still shows the key, or a new identity")
	}
	k.recreate(5, base.Add(5), false)
	if k.inc == inc || k.seq != 0 || k.created != 5 || k.deleted {
		t.Fatalf("recreate: inc %d seq %d created %v deleted %v", k.inc, k.seq, k.created, k.deleted)
	}
}

// A bucket created with first_seq from its creation time in µs (as the
// library creates one): revisions name their incarnation, and one created
// again later starts above every revision of the one before.
func TestKVRevisionsNameTheirIncarnation(t *testing.T) {
	k := newKV(0, true)
	rev, ok := k.create([]byte("a"))
	if want := uint64(base.UnixMicro()); !ok || rev != want {
		t.Fatalf("first revision %d, want the creation time in µs, %d", rev, want)
	}
	for range 100 {
		k.append(election.Put, []byte("v"))
	}
	old := k.seq
	k.recreate(time.Millisecond, base.Add(time.Millisecond), true)
	if k.seq <= old || k.seq != k.firstSeq-1 {
		t.Fatalf("created again 1 ms later: last sequence %d, first %d; want above %d, one below the first", k.seq, k.firstSeq, old)
	}
	if _, ok := k.update([]byte("b"), old); ok {
		t.Fatal("a compare-and-swap on the old incarnation's revision landed in the new one")
	}
}
