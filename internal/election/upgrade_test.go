package election

import (
	"testing"
	"time"
)

// The record init --upgrade writes decodes as a released record of this
// protocol, and P1 takes it as one when its epoch is in range: the first
// new node may take it at once.
func TestReleasedRecordIsAReleaseOfThisProtocol(t *testing.T) {
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	const base, rev = int64(1_700_000_000_000_000), uint64(7)
	data := ReleasedRecord(base+int64(rev), at)
	l, err := DecodeLease(data, rev)
	if err != nil {
		t.Fatalf("DecodeLease(%s): %v", data, err)
	}
	if l.Version != Protocol || l.NodeID != "" || l.Next != "" || l.Epoch != base+int64(rev) || !l.ExpiresAt.Equal(at) || !l.AcquiredAt.Equal(at) {
		t.Errorf("ReleasedRecord decodes as %+v", l)
	}
	if d := judgeRange(KVEntry{Op: Put, Rev: rev, Value: data}, base, true); d.kind != Released {
		t.Errorf("P1 judges it %v (%s), want released", d.kind, d.why)
	}
	if d := judgeRange(KVEntry{Op: Put, Rev: rev - 1, Value: data}, base, true); d.kind != Unknown {
		t.Errorf("at a revision below its epoch's range P1 judges it %v, want unknown", d.kind)
	}
}
