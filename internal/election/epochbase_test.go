package election

import (
	"fmt"
	"testing"
	"time"
)

// Rule 50: a bucket's epochs start at its creation time on the server's
// clock, in microseconds, and a revision counts from there, so that a
// bucket created again leads above every epoch of the one before it even
// when no node that remembers them is left.
func TestMachineEpochBase(t *testing.T) {
	created := mBase.Add(-300 * time.Millisecond)
	first := created.UnixMicro()
	again := mBase.Add(50 * time.Millisecond) // a bucket created again, later
	// leadsFirst: a new bucket's wait, then a leads at its first epoch.
	leadsFirst := []mStep{
		{0, Synced{}, []string{"arm +700ms"}},
		{700, Tick{}, []string{"incarnation", "arm -"}},
		{700, incarnationCreated(false, 0, created), []string{"history", "arm -"}},
		{705, hist(), []string{fmt.Sprintf("write acquire create epoch=%d", first), "arm -"}},
		{710, wrote(1), []string{"incarnation", "arm -"}},
		{710, incarnationCreated(false, 1, created), []string{fmt.Sprintf("become %d", first), "leader a", "arm +245ms"}},
	}
	for _, c := range []mCase{
		{name: "rule 50: a new bucket's first epoch is its creation time in microseconds",
			bucket: BucketFacts{AgeAtOpen: 300 * time.Millisecond, Created: created},
			steps: withPrefix(leadsFirst,
				mStep{955, Tick{}, []string{fmt.Sprintf("write renew rev=1 epoch=%d", first), "arm +650ms"}},
			)},
		{name: "rule 50: in a used bucket the stream's last sequence counts from the creation time (§5.3)",
			bucket: BucketFacts{LastSeqAtOpen: 10, Created: created},
			steps: []mStep{
				// A node with no memory writes the bucket's base as a floor
				// (rule 55), and takes it over above the stream's last
				// sequence, counted from the creation time.
				{0, Synced{}, []string{fmt.Sprintf("write seed create epoch=%d floor ttl=1s", first-1), "arm -"}},
				{1, wrote(11), nil},
				{2, floorRec(11, first-1, time.Second), nil},
				{10, readBacks{990, floorRec(11, first-1, time.Second)}, nil},
				{1001, Tick{}, []string{"incarnation", "arm -"}},
				{1001, incarnationCreated(false, 11, created), []string{"history", "arm -"}},
				{1002, hist(floorRec(11, first-1, time.Second)), []string{fmt.Sprintf("write acquire rev=11 epoch=%d", first+10), "arm -"}},
			}},
		{name: "rule 50: a record below the creation time (an older writer's) is taken over above it, its revision counted from there",
			bucket: BucketFacts{LastSeqAtOpen: 5, Created: created},
			steps: withPrefix(waitOutB,
				mStep{1000, incarnationCreated(false, 5, created), []string{"history", "arm -"}},
				mStep{1001, hist(held(5, "b", 3, time.Second)), []string{fmt.Sprintf("write acquire rev=5 epoch=%d", first+4), "arm -"}},
			)},
		{name: "rule 50: a leader that finds its bucket created again carries its epoch there, and the next tenure starts at the new bucket's creation time",
			bucket: BucketFacts{AgeAtOpen: 300 * time.Millisecond, Created: created},
			steps: withPrefix(leadsFirst,
				mStep{800, BucketCreated{}, []string{"incarnation", "arm +805ms"}},
				mStep{801, incarnationCreated(true, 0, again), []string{fmt.Sprintf("lose %d ErrEpochMismatch", first), "watch", "arm -"}},
				mStep{802, ok, []string{"leader -", "arm -"}},
				mStep{803, Synced{}, []string{fmt.Sprintf("write seed create epoch=%d floor ttl=1s", first), "arm -"}},
			),
			check: func(t *testing.T, m *Machine) {
				if e, err := m.nextEpoch(); err != nil || e != again.UnixMicro() {
					t.Errorf("next epoch %d (%v), want %d: the new bucket's creation time, its revisions counted from there", e, err, again.UnixMicro())
				}
			}},
		{name: "rule 56: a leader whose renewal conflict finds its bucket created again takes the new bucket's creation time as its epoch base",
			bucket: BucketFacts{AgeAtOpen: 300 * time.Millisecond, Created: created},
			steps: withPrefix(leadsFirst,
				mStep{955, Tick{}, []string{fmt.Sprintf("write renew rev=1 epoch=%d", first), "arm +650ms"}},
				mStep{960, conflict, []string{"get", "arm +645ms"}},
				mStep{962, notFound, []string{"incarnation", "arm +643ms"}},
				mStep{964, incarnationCreated(true, 1, again), []string{fmt.Sprintf("lose %d ErrEpochMismatch", first), "watch", "arm -"}},
			),
			check: func(t *testing.T, m *Machine) {
				// Simulator seeds 147622 and 895441: the old bucket's base
				// kept, the node's next tenure went below the new bucket's
				// first epoch, under one another node had led there.
				if e, err := m.nextEpoch(); err != nil || e != again.UnixMicro()+1 {
					t.Errorf("next epoch %d (%v), want %d: the new bucket's creation time, its last sequence 1 counted from there", e, err, again.UnixMicro()+1)
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) { runMachineCase(t, c) })
	}
}

// incarnationCreated is an Incarnation's answer that carries the bucket's
// creation time, as the driver's does.
func incarnationCreated(recreated bool, lastSeq uint64, created time.Time) Result {
	return Result{Recreated: recreated, LastSeq: lastSeq, Created: created}
}
