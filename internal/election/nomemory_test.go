package election

import (
	"testing"
	"time"
)

// Rule 55 (simulator seeds 914359 and 366271, raw purges): a purge of the
// stream by subject leaves no marker, so the nodes that remember the
// holder's longer TTL see nothing on their watch; they would find the key
// gone only when they read the stalled record back, at half that TTL. A
// node that remembers no epoch and finds the key absent in a bucket
// written before writes a floor at once, as a node that remembers does:
// the watch wakes every node that knows more, and the holder.
func TestMachineNoMemoryWritesAFloor(t *testing.T) {
	for _, c := range []mCase{
		{name: "rule 55 (simulator seed 914359): a node with no memory writes a floor over an absent key in a used bucket at once, and waits out the floor a node that knew a longer TTL writes over it",
			// Started just after a raw purge removed a live 3s-TTL
			// holder's record (last sequence 30).
			bucket: BucketFacts{LastSeqAtOpen: 30},
			steps: []mStep{
				{0, Synced{}, []string{"write seed create epoch=1 floor ttl=1s", "arm -"}},
				{2, wrote(31), nil},
				// The watch woke a node that knew the holder's epoch 26 and
				// its 3s TTL: its floor goes over this one.
				{3, floorRec(31, 1, time.Second), nil},
				{5, floorRec(32, 26, 3*time.Second), nil},
				{10, readBacks{3000, floorRec(32, 26, 3*time.Second)}, nil},
				{3010, Tick{}, []string{"incarnation", "arm -"}},
				{3010, incarnation(false, 32), []string{"history", "arm -"}},
				{3011, hist(floorRec(32, 26, 3*time.Second)), []string{"write acquire rev=32 epoch=32", "arm -"}},
			}},
		{name: "rule 55: the floor of a node with no memory carries the bucket's base epoch, below every epoch led in it (rule 50)",
			bucket: BucketFacts{LastSeqAtOpen: 30, Created: mBase.Add(-time.Hour)},
			steps: []mStep{
				{0, Synced{}, []string{"write seed create epoch=1893452399999999 floor ttl=1s", "arm -"}},
			}},
	} {
		t.Run(c.name, func(t *testing.T) { runMachineCase(t, c) })
	}
}
