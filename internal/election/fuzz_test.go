package election

import (
	"errors"
	"math"
	"testing"

	"github.com/ozanturksever/go-cluster/internal/wire"
)

// FuzzNextEpoch holds P2's arithmetic (I1) for any numbers: the epoch
// written over a record is its epoch + 1; over an unknown value at rev or
// a key absent at lastSeq it is above base + that sequence; it is always
// above what it counts from, and only the largest int64 has no next.
func FuzzNextEpoch(f *testing.F) {
	f.Add(uint8(Held), int64(41), uint64(7), uint64(9), int64(1_700_000_000_000_000))
	f.Add(uint8(Unknown), int64(math.MaxInt64), uint64(math.MaxUint64), uint64(0), int64(5))
	f.Add(uint8(Absent), int64(0), uint64(0), uint64(math.MaxUint64), int64(math.MaxInt64))
	f.Fuzz(func(t *testing.T, k uint8, epoch int64, rev, lastSeq uint64, base int64) {
		kind := []Kind{Held, Released, Unknown, Absent}[k%4]
		if base < 0 || (kind == Held || kind == Released) && epoch <= 0 {
			return // a base is never negative; a record's epoch is above its base
		}
		got, err := nextEpoch(kind, epoch, rev, lastSeq, base)
		seq := rev
		if kind == Absent {
			seq = lastSeq
		}
		if err != nil {
			full := epoch == math.MaxInt64
			if kind == Unknown || kind == Absent {
				full = seq >= uint64(math.MaxInt64-base)
			}
			if !full || !errors.Is(err, wire.ErrEpochExhausted) {
				t.Fatalf("nextEpoch(%v, %d, %d, %d, %d): %v, want wire.ErrEpochExhausted only when no int64 is left", kind, epoch, rev, lastSeq, base, err)
			}
			return // no int64 above what it counts from
		}
		switch kind {
		case Held, Released:
			if got != epoch+1 {
				t.Fatalf("over a record at epoch %d: %d, want %d", epoch, got, epoch+1)
			}
		case Unknown, Absent:
			if got <= base || uint64(got-base) <= seq {
				t.Fatalf("nextEpoch(%v, ...) = %d is not above base %d + the sequence %d it replaced", kind, got, base, seq)
			}
		}
	})
}

// FuzzJudgeRange holds P1 (I1) for any value: what is judged a record
// of this protocol has an epoch in (base, base + index(rev)]; markers and
// anything else are unknown.
func FuzzJudgeRange(f *testing.F) {
	f.Add([]byte(`{"node_id":"a","epoch":12,"expires_at":"2026-01-01T00:00:00Z","acquired_at":"2026-01-01T00:00:00Z","ttl_ms":1000,"v":3}`), uint64(5), int64(10), uint8(0))
	f.Add([]byte(`{"epoch":11,"v":3}`), uint64(1), int64(10), uint8(0))
	f.Add([]byte(`{"node_id":"a","epoch":99,"expires_at":"2026-01-01T00:00:00Z","acquired_at":"2026-01-01T00:00:00Z","ttl_ms":1000,"v":3}`), uint64(5), int64(10), uint8(0))
	f.Add([]byte("garbage"), uint64(3), int64(0), uint8(1))
	f.Fuzz(func(t *testing.T, value []byte, rev uint64, epochBase int64, op uint8) {
		if epochBase < 0 {
			return
		}
		// an incarnation whose first sequence is rev's low half: the index
		// of rev in it is at most rev
		inc := Incarnation{FirstSeq: rev / 2, EpochBase: epochBase}
		base, idx := inc.base(), inc.index(rev)
		e := KVEntry{Rev: rev, Op: []Op{Put, Delete, Purge}[op%3], Value: value}
		d := judgeRange(e, inc, true, wire.ProtocolHi)
		switch d.kind {
		case Held, Released:
			if e.Op != Put || d.lease.Version != wire.Protocol || d.lease.Epoch <= base || uint64(d.lease.Epoch-base) > idx || idx > rev {
				t.Fatalf("judged %v at rev %d, base %d, index %d: %+v", d.kind, rev, base, idx, d.lease)
			}
			if (d.kind == Released) != (d.lease.NodeID == "") {
				t.Fatalf("judged %v with holder %q", d.kind, d.lease.NodeID)
			}
		case Unknown:
			if d.why == "" {
				t.Fatal("an unknown value without a reason")
			}
		default:
			t.Fatalf("judged %v", d.kind)
		}
	})
}
