package wire

import (
	"testing"
	"time"
)

// TestDecodedLeaseCanBeWrittenBack: a record DecodeLease accepts must not
// make the election panic when it writes a record derived from it.
// A release writes back the tenure's AcquiredAt in UTC; an accepted
// acquired_at with year 9999 and a negative offset is year 10000 in UTC,
// which encoding/json refuses, and Encode panics on an encoding error.
func TestDecodedLeaseCanBeWrittenBack(t *testing.T) {
	for _, v := range []string{
		`{"node_id":"a","epoch":1,"acquired_at":"9999-12-31T23:59:59-01:00"}`,
		`{"node_id":"a","epoch":1,"acquired_at":"0000-01-01T00:00:00+01:00"}`,
	} {
		l, err := DecodeLease([]byte(v), 3)
		if err != nil {
			continue // rejecting it is a fine fix too
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("DecodeLease accepted %s, and writing back its acquired_at panics: %v", v, r)
				}
			}()
			ReleasedRecord(0, l.Epoch, l.AcquiredAt, time.Now(), "")
		}()
	}
}

// The record init --upgrade writes decodes as a released record of this
// protocol at its epoch, with no holder and no successor.
func TestReleasedRecordIsAReleaseOfThisProtocol(t *testing.T) {
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	data := ReleasedRecord(0, 42, at, at, "")
	l, err := DecodeLease(data, 7)
	if err != nil {
		t.Fatalf("DecodeLease(%s): %v", data, err)
	}
	if l.Version != Protocol || l.NodeID != "" || l.Next != "" || l.Epoch != 42 || l.Revision != 7 || !l.ExpiresAt.Equal(at) || !l.AcquiredAt.Equal(at) {
		t.Errorf("ReleasedRecord decodes as %+v", l)
	}
}
