package chaos

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// The fenced-state check must catch what it is there to catch: these feed
// CheckState recorded orders and writes that a broken fence would produce.

// created is the creation time of the incarnations orderOf builds: 1µs
// after 1970, so that their epoch base is 0 and a record stored at
// revision r may carry epochs 1 to r (docs/design.md §2.4).
var created = time.UnixMicro(1)

// orderOf builds one incarnation from msgs, noticed at t0, with its last
// sequence known (the stream still there).
func orderOf(msgs ...StreamMsg) Incarnation {
	last := uint64(0)
	if len(msgs) > 0 {
		last = msgs[len(msgs)-1].Seq
	}
	return Incarnation{Created: created, Noticed: t0, Msgs: msgs, LastSeq: last}
}

// held is a lease record of this protocol of node at epoch, stored at seq.
func held(t *testing.T, seq uint64, node string, epoch int64) StreamMsg {
	t.Helper()
	return record(t, seq, cluster.Lease{Version: wire.Protocol, NodeID: node, Epoch: epoch, AcquiredAt: t0, ExpiresAt: t0.Add(time.Second), TTLMillis: 1000})
}

// record is l stored at seq.
func record(t *testing.T, seq uint64, l cluster.Lease) StreamMsg {
	t.Helper()
	data, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	return StreamMsg{Seq: seq, Key: wire.LeaseKey, Value: data}
}

// wrote is the state write seq of instance with epoch in its header,
// stored at rev.
func wrote(rev uint64, instance string, epoch int64, seq uint64) StreamMsg {
	return StreamMsg{Seq: rev, Key: "state.chaos.k" + strconv.FormatUint(seq, 10), Value: []byte(stateTag(instance, epoch, seq)),
		Epoch: strconv.FormatInt(epoch, 10)}
}

// try is the writer's record of that write, with outcome (and the revision
// State returned when acknowledged), sent at t0.
func try(instance string, epoch int64, seq uint64, outcome Outcome, rev uint64) StateTry {
	return StateTry{Instance: instance, Key: "chaos.k" + strconv.FormatUint(seq, 10), Value: stateTag(instance, epoch, seq), Seq: seq,
		Epoch: epoch, Outcome: outcome, Revision: rev, Sent: t0}
}

func TestCheckStateAcceptsACleanHistory(t *testing.T) {
	h := StateHistory{
		Order: []Incarnation{orderOf(
			held(t, 1, "a", 1), wrote(2, "a#1", 1, 1), held(t, 3, "a", 1), wrote(4, "a#1", 1, 2),
			held(t, 5, "b", 2), wrote(6, "b#1", 2, 3),
		)},
		Writes: []StateTry{
			try("a#1", 1, 1, Acked, 2), try("a#1", 1, 2, Acked, 4),
			try("a#1", 1, 9, Fenced, 0), try("a#1", 1, 10, NotLeader, 0),
			try("b#1", 2, 3, Acked, 6),
		},
		Tenures: []Tenure{{Instance: "a#1", Epoch: 1}, {Instance: "b#1", Epoch: 2}},
	}
	stats, v := CheckState(h)
	if len(v) != 0 {
		t.Errorf("violations in a clean history: %q", v)
	}
	if stats.Acked != 3 || stats.Fenced != 1 || stats.NotLeader != 1 || stats.InOrder != 3 || stats.Checked != 3 || stats.Unchecked != 0 {
		t.Errorf("stats %+v", stats)
	}
}

func TestNegativeControlStateWriteAfterASuccessorIsReported(t *testing.T) {
	// a's write lands after b's lease record: the server let a stale
	// leader's write through.
	h := StateHistory{Order: []Incarnation{orderOf(
		held(t, 1, "a", 1), wrote(2, "a#1", 1, 1),
		held(t, 3, "b", 2), wrote(4, "a#1", 1, 2),
	)}}
	_, v := CheckState(h)
	wantViolation(t, v, `state write "a#1/1/2" (key chaos.k2, revision 4 of stream #1) was accepted, but the latest lease record before it (revision 3) is held by b at epoch 2`)
	if len(v) != 1 {
		t.Errorf("want 1 violation, got %q", v)
	}
}

func TestNegativeControlAcknowledgedWriteMissingIsReported(t *testing.T) {
	h := StateHistory{
		Order:  []Incarnation{orderOf(held(t, 1, "a", 1), wrote(2, "a#1", 1, 1), held(t, 3, "a", 1))},
		Writes: []StateTry{try("a#1", 1, 1, Acked, 2), try("a#1", 1, 2, Acked, 4)},
	}
	_, v := CheckState(h)
	wantViolation(t, v, `acknowledged write "a#1/1/2" (key chaos.k2, revision 4, epoch 1, by a#1) is missing from the stream`)

	// At another revision than State returned: also reported.
	h.Writes = []StateTry{try("a#1", 1, 1, Acked, 7)}
	_, v = CheckState(h)
	wantViolation(t, v, "is in stream #1 as key chaos.k1 at revision 2")
}

func TestNegativeControlWrongEpochAndNonHeldRecordsAreReported(t *testing.T) {
	garbage := StreamMsg{Seq: 5, Key: wire.LeaseKey, Value: []byte("{not json")}
	released := held(t, 7, "", 3)
	deleted := StreamMsg{Seq: 9, Key: wire.LeaseKey, Op: "DEL"}
	h := StateHistory{
		Order: []Incarnation{orderOf(
			wrote(1, "a#1", 1, 1), // before any lease record
			held(t, 2, "a", 2), wrote(3, "a#1", 1, 2),
			wrote(4, "b#1", 2, 3), // a holds epoch 2, b writes with it
			garbage, wrote(6, "a#1", 3, 4),
			released, wrote(8, "a#1", 3, 5),
			deleted, wrote(10, "a#1", 3, 6),
			held(t, 11, "a", 3), StreamMsg{Seq: 12, Key: "state.chaos.k7", Value: []byte("forged")},
		)},
		// a#2, a new Node under the same NodeID, wrote with a#1's epoch.
		Tenures: []Tenure{{Instance: "a#1", Epoch: 3}},
	}
	h.Order[0].Msgs = append(h.Order[0].Msgs, wrote(13, "a#2", 3, 8),
		// A record of protocol 1 (no "v"), and one whose epoch is above
		// base + revision: neither is a lease record of this protocol.
		record(t, 14, cluster.Lease{NodeID: "a", Epoch: 3}), wrote(15, "a#1", 3, 9),
		held(t, 16, "a", 17), wrote(17, "a#1", 17, 10),
	)
	h.Order[0].LastSeq = 17
	_, v := CheckState(h)
	for _, want := range []string{
		"revision 1 of stream #1) was accepted, but no lease record comes before it",
		"it carries epoch 1 while the latest lease record before it (revision 2) is a's at epoch 2",
		"is held by a at epoch 2, not by the writer b#1",
		"(revision 5) is not a lease record",
		"(revision 7) is released (epoch 3)",
		"(revision 9) is a DEL marker",
		`"forged" (key chaos.k7, revision 12 of stream #1) was accepted, but it is not a write of the chaos writer`,
		"epoch 3 was the tenure of a#1, not of the writer a#2",
		"(revision 14) is a record of protocol 1",
		"(revision 16) has epoch 17, outside its incarnation's range (0, 16]",
	} {
		wantViolation(t, v, want)
	}
	if len(v) != 10 {
		t.Errorf("want 10 violations, got %d: %q", len(v), v)
	}
}

func TestNegativeControlRefusedWriteThatLandedIsReported(t *testing.T) {
	h := StateHistory{
		Order:  []Incarnation{orderOf(held(t, 1, "a", 1), wrote(2, "a#1", 1, 1), wrote(3, "a#1", 1, 2))},
		Writes: []StateTry{try("a#1", 1, 1, Fenced, 0), try("a#1", 1, 2, NotLeader, 0)},
	}
	_, v := CheckState(h)
	wantViolation(t, v, `write "a#1/1/1" (key chaos.k1, by a#1) refused (ErrFenced), yet it is in stream #1 at revision 2`)
	wantViolation(t, v, `write "a#1/1/2" (key chaos.k2, by a#1) refused (ErrNotLeader), yet it is in stream #1 at revision 3`)
}

func TestNegativeControlCommitLandedInPartIsReported(t *testing.T) {
	w := func(seq uint64, o Outcome, rev uint64) StateTry {
		s := try("a#1", 1, seq, o, rev)
		s.Commit, s.Writes, s.Cause = 1, 3, "timeout"
		return s
	}
	h := StateHistory{
		Order:  []Incarnation{orderOf(held(t, 1, "a", 1), wrote(2, "a#1", 1, 1), wrote(3, "a#1", 1, 2), held(t, 4, "a", 1))},
		Writes: []StateTry{w(1, Unknown, 0), w(2, Unknown, 0), w(3, Unknown, 0)},
	}
	_, v := CheckState(h)
	wantViolation(t, v, "Commit by a#1 (outcome unknown: timeout) landed in part: 2 of its 3 writes are in stream #1 from revision 2")

	// Acknowledged whole: each write at its revision, one Commit counted.
	h.Order = []Incarnation{orderOf(held(t, 1, "a", 1), wrote(2, "a#1", 1, 1), wrote(3, "a#1", 1, 2), wrote(4, "a#1", 1, 3))}
	h.Writes = []StateTry{w(1, Acked, 2), w(2, Acked, 3), w(3, Acked, 4)}
	stats, v := CheckState(h)
	if len(v) != 0 || stats.Commits != 1 || stats.Acked != 3 {
		t.Errorf("a whole Commit: %+v, %q", stats, v)
	}
}

func TestCheckStateExcusesWritesLostWithTheBucketOrNotSeen(t *testing.T) {
	// Stream #1 was deleted after write 2 was sent; stream #2 lost
	// revisions 2-3 to the history limit before the recorder read them.
	one := orderOf(held(t, 1, "a", 1), wrote(2, "a#1", 1, 1))
	one.LastSeq = 0 // deleted: its tail is not known
	two := orderOf(held(t, 1, "b", 1), wrote(4, "b#1", 1, 4), held(t, 5, "b", 1), wrote(6, "b#1", 1, 5))
	two.Noticed = t0.Add(2 * time.Second)
	h := StateHistory{
		Order: []Incarnation{one, two},
		Writes: []StateTry{
			try("a#1", 1, 1, Acked, 2),
			try("a#1", 1, 2, Acked, 3), // in #1's tail, gone with the bucket
			try("b#1", 1, 3, Acked, 3), // in #2's unseen revisions 2-3
			try("b#1", 1, 4, Acked, 4),
			try("b#1", 1, 5, Acked, 6),
		},
		Deletions: []time.Time{t0.Add(time.Second)},
	}
	h.Writes[2].Sent, h.Writes[3].Sent, h.Writes[4].Sent = t0.Add(3*time.Second), t0.Add(3*time.Second), t0.Add(3*time.Second)
	stats, v := CheckState(h)
	if len(v) != 0 {
		t.Errorf("violations: %q", v)
	}
	// Write 4 follows revisions not seen: b's record at 1 may not be the
	// latest before it, so it is not checked.
	if stats.LostToRecreate != 1 || stats.LostUnseen != 1 || stats.NotSeen != 2 || stats.Unchecked != 1 || stats.Checked != 2 || stats.Streams != 2 {
		t.Errorf("stats %+v", stats)
	}

	// The same loss with no deletion after it and every revision seen is a
	// violation.
	h.Deletions = nil
	h.Order[0].LastSeq = 2
	h.Order[1].Msgs = append([]StreamMsg{h.Order[1].Msgs[0], {Seq: 2, Key: "cooldown-a"}, {Seq: 3, Key: "cooldown-b"}}, h.Order[1].Msgs[1:]...)
	_, v = CheckState(h)
	wantViolation(t, v, `acknowledged write "b#1/1/3" (key chaos.k3, revision 3, epoch 1, by b#1) is missing`)
	wantViolation(t, v, `acknowledged write "a#1/1/2" (key chaos.k2, revision 3, epoch 1, by a#1) is missing`)
}
