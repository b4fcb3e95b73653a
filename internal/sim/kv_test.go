package sim

import "testing"

func TestKVCompareAndSwap(t *testing.T) {
	k := newKV(0)
	if _, r := k.update([]byte("a"), 0); r != ResultConflict {
		t.Fatalf("update of an absent key: %v, want a conflict", r)
	}
	rev, r := k.create([]byte("a"))
	if r != ResultOK || rev != 1 {
		t.Fatalf("create: rev %d %v", rev, r)
	}
	if _, r := k.create([]byte("b")); r != ResultConflict {
		t.Fatalf("create over a value: %v, want a conflict", r)
	}
	if _, r := k.update([]byte("b"), 0); r != ResultConflict {
		t.Fatalf("update on a stale revision: %v, want a conflict", r)
	}
	k.seq++ // a write to another key of the stream
	if rev, r := k.update([]byte("b"), 1); r != ResultOK || rev != 3 {
		t.Fatalf("update: rev %d %v, want 3", rev, r)
	}
}

// Create is a CAS on revision 0: refused over a marker (rule 23).
func TestKVCreateRefusesAMarker(t *testing.T) {
	k := newKV(0)
	k.create([]byte("a"))
	k.append(OpDelete, nil)
	if _, ok := k.get(); ok {
		t.Fatal("get of a deleted key found a value")
	}
	if _, r := k.create([]byte("b")); r != ResultConflict {
		t.Fatalf("create over a delete marker: %v, want a conflict", r)
	}
	if rev, r := k.update([]byte("b"), 2); r != ResultOK || rev != 3 {
		t.Fatalf("update over the marker: rev %d %v", rev, r)
	}
}

func TestKVPurgeCompactRecreate(t *testing.T) {
	k := newKV(0)
	for i := 0; i < 10; i++ {
		k.append(OpPut, []byte("v"))
	}
	if h := k.historyEntries(); len(h) != 8 || h[0].Rev != 3 {
		t.Fatalf("history keeps %d entries from %d, want 8 from 3", len(h), h[0].Rev)
	}
	k.append(OpPurge, nil)
	if h := k.historyEntries(); len(h) != 1 || h[0].Op != OpPurge {
		t.Fatalf("after a purge the history is %v, want the marker alone", h)
	}
	k.update([]byte("floor"), 11)
	k.compact()
	if _, ok := k.last(); !ok {
		t.Fatal("compaction removed a key written again after its purge")
	}
	k.append(OpPurge, nil)
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
	k.recreate(5, base.Add(5))
	if k.inc == inc || k.seq != 0 || k.created != 5 || k.deleted {
		t.Fatalf("recreate: inc %d seq %d created %v deleted %v", k.inc, k.seq, k.created, k.deleted)
	}
}
