package cluster

import (
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/election"
	"github.com/ozanturksever/go-cluster/internal/store"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// store.create writes only into a key with no entry at all (a marker is
// a value, written over by a CAS on its revision), and only when the
// stream's last sequence is the one the node saw the key absent at (C3 in
// docs/design.md): anything written anywhere in the bucket since then
// makes it a conflict.
func TestStoreCreateIsCheckedAgainstTheLastSequence(t *testing.T) {
	t.Parallel()
	srv, _, id := setup(t)
	kv := openKV(t, srv.URL(), id)
	st, err := store.Open(ctx(t), srv.Connect(t), store.API{}, id, store.Options{}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	lastSeq := func() uint64 {
		t.Helper()
		inc, err := st.Confirm(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		return inc.LastSeq
	}
	if _, err := kv.Put(ctx(t), wire.LeaseKey, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := kv.Delete(ctx(t), wire.LeaseKey); err != nil {
		t.Fatal(err)
	}
	if rev, err := st.Create(ctx(t), wire.LeaseKey, []byte("y"), lastSeq()); store.Classify(err) != election.Conflict {
		t.Errorf("create over a delete marker = revision %d, %v; want a conflict", rev, err)
	}
	if err := kv.Purge(ctx(t), wire.LeaseKey); err != nil {
		t.Fatal(err)
	}
	if rev, err := st.Create(ctx(t), wire.LeaseKey, []byte("y"), lastSeq()); store.Classify(err) != election.Conflict {
		t.Errorf("create over a purge marker = revision %d, %v; want a conflict", rev, err)
	}
	seen := lastSeq()
	if _, err := kv.Put(ctx(t), "other", []byte("z")); err != nil {
		t.Fatal(err)
	}
	if rev, err := st.Create(ctx(t), "lease-other", []byte("y"), seen); store.Classify(err) != election.Conflict {
		t.Errorf("create after another key was written = revision %d, %v; want a conflict", rev, err)
	}
	now := lastSeq()
	rev, err := st.Create(ctx(t), "lease-other", []byte("y"), now)
	if err != nil || rev != now+1 {
		t.Errorf("create of an absent key at the last sequence = revision %d, %v; want %d", rev, err, now+1)
	}
}
