package engine

import (
	"errors"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/election"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// record is a held record naming NodeID "a" by instance at rev.
func record(instance string, rev uint64, epoch int64) election.KVEntry {
	now := time.Now()
	v := wire.Lease{NodeID: "a", Epoch: epoch, TTLMillis: 1000, Instance: instance, ExpiresAt: now, AcquiredAt: now}.Encode()
	return election.KVEntry{Rev: rev, Op: election.Put, Value: v}
}

// bucketAt is an incarnation created at created, read at lastSeq.
func bucketAt(created time.Time, lastSeq uint64) election.Incarnation {
	return election.Incarnation{Created: created, LastSeq: lastSeq}
}

// runsOn notes entries in turn and fails the test at the first error.
func runsOn(t *testing.T, f *foreignSelf, what string, entries ...election.KVEntry) {
	t.Helper()
	for _, e := range entries {
		if err := f.note(e); err != nil {
			t.Fatalf("%s: revision %d stopped the node: %v", what, e.Rev, err)
		}
	}
}

// stopsOn notes e and wants ErrDuplicateNodeID.
func stopsOn(t *testing.T, f *foreignSelf, what string, e election.KVEntry) {
	t.Helper()
	if err := f.note(e); !errors.Is(err, wire.ErrDuplicateNodeID) {
		t.Fatalf("%s: revision %d: %v, want ErrDuplicateNodeID", what, e.Rev, err)
	}
}

// E14: a record of another process with this NodeID seen first is a
// predecessor's, and a watch opened again delivers it again: it counts
// once with the predecessor's one late write, and the node runs on. Two
// foreign revisions after it stop the node.
func TestPredecessorRecordSeenAgainByAReopenedWatchCountsOnce(t *testing.T) {
	f := foreignSelf{nodeID: "a", instance: "a-i"}
	f.confirmed(bucketAt(time.Now().Add(-time.Hour), 5))
	runsOn(t, &f, "the predecessor's record, again, and its late write", record("a-old", 6, 3), record("a-old", 6, 3), record("a-old", 7, 4))
	stopsOn(t, &f, "a second foreign revision after the first entry", record("a-old", 8, 5))
}

// E14: a watch opened again (after the old one failed, or the connection
// moved) is an R1 consumer the meta leader places on any replica of the
// stream; on one that lags (its routes were cut), it shows an older
// revision first and then catches up through the revisions already seen.
// The predecessor's records delivered a second time are not another
// process (chaos seed 99: node5#3 stopped 1.2 s after it started); a live
// one's renewals still are.
func TestPredecessorRecordsReplayedByAWatchOnALaggingReplicaCountOnce(t *testing.T) {
	f := foreignSelf{nodeID: "a", instance: "a-new"}
	f.confirmed(bucketAt(time.Now().Add(-time.Hour), 11))
	runsOn(t, &f, "first watch: the predecessor's record and its late write", record("a-old", 11, 4), record("a-old", 12, 4))
	runsOn(t, &f, "watch on a lagging replica", record("a-old", 8, 4), record("a-old", 9, 4), record("a-old", 10, 4), record("a-old", 11, 4), record("a-old", 12, 4))
	stopsOn(t, &f, "a second foreign revision above the history", record("a-old", 13, 4))
}

// E14: the first watch itself may be placed on a lagging replica: the
// predecessor's renewals written before this process started, delivered
// as the replica catches up, are the predecessor's history, up to the
// bucket's last sequence the Confirm before the watch read.
func TestPredecessorHistoryDeliveredByTheFirstWatchOnALaggingReplica(t *testing.T) {
	f := foreignSelf{nodeID: "a", instance: "a-new"}
	f.confirmed(bucketAt(time.Now().Add(-time.Hour), 11))
	runsOn(t, &f, "first watch on a lagging replica", record("a-old", 8, 4), record("a-old", 9, 4), record("a-old", 10, 4), record("a-old", 11, 4), record("a-old", 12, 4))
	stopsOn(t, &f, "a second foreign revision above the history", record("a-old", 13, 4))
}

// E14: counting is per incarnation. A Confirm of another one (the bucket
// created again) starts over at its last sequence; one of the same moves
// nothing, or a live process's renewals would hide below it.
func TestForeignRevisionsAreCountedPerIncarnation(t *testing.T) {
	old, recreated := time.Now().Add(-time.Hour), time.Now()
	f := foreignSelf{nodeID: "a", instance: "a-i"}
	f.confirmed(bucketAt(old, 6))
	runsOn(t, &f, "first incarnation", record("a-old", 6, 3), record("a-old", 7, 4))
	f.confirmed(bucketAt(recreated, 2))
	runsOn(t, &f, "the bucket created again", record("a-old", 2, 1), record("a-old", 3, 2))
	stopsOn(t, &f, "a second foreign revision in the new incarnation", record("a-old", 4, 3))

	f = foreignSelf{nodeID: "a", instance: "a-i"}
	f.confirmed(bucketAt(old, 6))
	runsOn(t, &f, "first entry", record("a-old", 6, 3))
	f.confirmed(bucketAt(old, 9))
	runsOn(t, &f, "after a later Confirm", record("a-old", 7, 4))
	stopsOn(t, &f, "a second foreign revision after a later Confirm", record("a-old", 8, 5))
}
