package driver

import (
	"errors"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/election"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// E14: a record of another process with this NodeID seen first is a
// predecessor's, and a watch opened again delivers it again: it counts
// once with the predecessor's one late write, and the node runs on. Two
// foreign revisions after it stop the node; after a bucket created again
// (revisions go back) counting starts over.
func TestPredecessorRecordSeenAgainByAReopenedWatchCountsOnce(t *testing.T) {
	old := func(rev uint64, epoch int64) election.KVEntry {
		now := time.Now()
		v := wire.Lease{NodeID: "a", Epoch: epoch, TTLMillis: 2000, Instance: "a-old", ExpiresAt: now, AcquiredAt: now}.Encode()
		return election.KVEntry{Rev: rev, Op: election.Put, Value: v}
	}
	f := foreignSelf{nodeID: "a", instance: "a-i"}
	for i, e := range []election.KVEntry{old(6, 3), old(6, 3), old(7, 4)} {
		if err := f.note(e); err != nil {
			t.Fatalf("entry %d: the node stopped on its predecessor's records: %v", i, err)
		}
	}
	if err := f.note(old(8, 5)); !errors.Is(err, wire.ErrDuplicateNodeID) {
		t.Fatalf("a second foreign revision after the first entry: %v, want ErrDuplicateNodeID", err)
	}
	f = foreignSelf{nodeID: "a", instance: "a-i"}
	for i, e := range []election.KVEntry{old(6, 3), old(7, 4), old(2, 1), old(3, 2)} {
		if err := f.note(e); err != nil {
			t.Fatalf("entry %d: counted across a bucket created again: %v", i, err)
		}
	}
}
