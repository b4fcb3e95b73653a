package election

import (
	"testing"
	"time"
)

// Rules 34 and 47 on a key that holds a record: rule 51 answers a kept
// entry behind an absent key's identity check first, so these rows keep
// the two checks of a kept watch entry reachable (the mutants
// rule34-acquire-on-a-stale-view and rule47-floor-on-a-stale-view).
func TestMachineKeptEntries(t *testing.T) {
	for _, c := range []mCase{
		{name: "rule 34 on a held record: a takeover decided before an entry the watch showed while the history was read is decided again, not written",
			bucket: BucketFacts{LastSeqAtOpen: 5},
			steps: withPrefix(waitOutB,
				mStep{1000, incarnation(false, 5), []string{"history", "arm -"}},
				// c took over meanwhile; the watch shows it behind the read.
				mStep{1001, held(6, "c", 4, time.Second), []string{"arm -"}},
				mStep{1002, hist(held(5, "b", 3, time.Second)), []string{"leader c", "arm +*"}},
			)},
		{name: "rule 47 on a held record: no floor over garbage while the watch holds a later entry behind a read",
			steps: withPrefix(followB,
				mStep{500, Tick{}, []string{"get", "arm -"}},
				mStep{501, garbage(6), []string{"arm -"}},
				mStep{501, held(7, "c", 4, time.Second), []string{"arm -"}},
				mStep{502, got(held(5, "b", 3, time.Second)), []string{"leader -", "leader c", "arm +*"}},
			)},
	} {
		t.Run(c.name, func(t *testing.T) { runMachineCase(t, c) })
	}
}
