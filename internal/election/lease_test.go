package election

import (
	"testing"
	"time"
)

// TestDecodedLeaseCanBeWrittenBack: a record DecodeLease accepts must not
// make the election panic when it writes a record derived from it.
// A release writes back the tenure's AcquiredAt in UTC; an accepted
// acquired_at with year 9999 and a negative offset is year 10000 in UTC,
// which encoding/json refuses, and encode panics on an encoding error.
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
			released(l.Epoch, l.AcquiredAt, time.Now(), "")
		}()
	}
}
