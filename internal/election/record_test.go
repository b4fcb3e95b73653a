package election

import (
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/wire"
)

// The record init --upgrade writes is one P1 takes for a release when its
// epoch is in range: the first new node may take it at once.
func TestReleasedRecordIsJudgedReleased(t *testing.T) {
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	const base, rev = int64(1_700_000_000_000_000), uint64(7)
	inc := Incarnation{EpochBase: base} // a bucket of protocol 2 moved: no first_seq
	data := wire.ReleasedRecord(0, base+int64(rev), at, at, "")
	if d := judgeRange(KVEntry{Op: Put, Rev: rev, Value: data}, inc, true, wire.ProtocolHi); d.kind != Released {
		t.Errorf("P1 judges it %v (%s), want released", d.kind, d.why)
	}
	if d := judgeRange(KVEntry{Op: Put, Rev: rev - 1, Value: data}, inc, true, wire.ProtocolHi); d.kind != Unknown {
		t.Errorf("at a revision below its epoch's range P1 judges it %v, want unknown", d.kind)
	}
}
