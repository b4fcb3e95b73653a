package election

import (
	"errors"
	"math"
	"testing"
)

// FuzzEpochAfter covers the whole int64 range: the next epoch is above
// the floor, or the floor is the largest epoch and ErrEpochExhausted says
// so. Never a wrap, never the same epoch twice.
func FuzzEpochAfter(f *testing.F) {
	for _, v := range []int64{math.MinInt64, -1, 0, 1, 41, math.MaxInt64 - 1, math.MaxInt64} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, floor int64) { checkEpochAfter(t, floor) })
}

func checkEpochAfter(t *testing.T, floor int64) {
	t.Helper()
	next, err := epochAfter(floor)
	if floor == math.MaxInt64 {
		if !errors.Is(err, ErrEpochExhausted) || next != 0 {
			t.Fatalf("epochAfter(MaxInt64) = %d, %v; want ErrEpochExhausted", next, err)
		}
		return
	}
	if err != nil || next <= floor || next < 1 {
		t.Fatalf("epochAfter(%d) = %d, %v; want an epoch above it", floor, next, err)
	}
}

// FuzzRevisionEpoch: the epoch that follows any revision's floor
// (revisionEpoch) is above it, or ErrEpochExhausted says there is none.
func FuzzRevisionEpoch(f *testing.F) {
	for _, v := range []uint64{0, 1, math.MaxInt64, math.MaxInt64 + 1, math.MaxUint64} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, rev uint64) { checkEpochAfter(t, revisionEpoch(rev)) })
}
