package cluster

import (
	"testing"
	"time"
)

// store.create writes only into a key with no entry at all. nats.go's KV
// Create also succeeds over a delete or purge marker, but the election
// counts a marker as present (docs/design.md §5.2): a node that judged the
// key absent from a stale view created it just after an operator's delete,
// beside a holder that had written over the marker (found by the
// simulator, seed 3299).
func TestStoreCreateRefusesAMarker(t *testing.T) {
	srv, _, id := setup(t)
	kv := openKV(t, srv.URL(), id)
	if _, err := kv.Put(ctx(t), leaseKey, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := kv.Delete(ctx(t), leaseKey); err != nil {
		t.Fatal(err)
	}
	st, err := openStore(ctx(t), srv.Connect(t), jsAPI{}, id, BucketOptions{}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if rev, err := st.create(ctx(t), leaseKey, []byte("y")); classify(err) != classConflict {
		t.Errorf("create over a delete marker = revision %d, %v; want a conflict", rev, err)
	}
	if err := kv.Purge(ctx(t), leaseKey); err != nil {
		t.Fatal(err)
	}
	if rev, err := st.create(ctx(t), leaseKey, []byte("y")); classify(err) != classConflict {
		t.Errorf("create over a purge marker = revision %d, %v; want a conflict", rev, err)
	}
	if _, err := st.create(ctx(t), "lease-other", []byte("y")); err != nil {
		t.Errorf("create of an absent key: %v", err)
	}
}
