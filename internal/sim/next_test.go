package sim

import (
	"testing"

	next "github.com/ozanturksever/go-cluster/internal/election/v2"
)

// TestNextMachineSim explores the next machine (internal/election/v2,
// docs/design-next.md) with every fault kind, raw purges and the bucket's
// TTL changed on a live cluster, judged with no stated limit excused.
// CI runs more seeds (.ci/run); -sim.seeds sets how many here.
func TestNextMachineSim(t *testing.T) {
	count := 2000
	switch {
	case flagSet("sim.seeds"):
		count = *simSeeds
	case testing.Short() || raceEnabled:
		count = 200
	}
	ex := exploreSeeds(*simFirst, count, *simMaxFail, Options{Next: true})
	t.Logf("explored %d seeds of the next machine from %d; %.1f faults per seed", ex.ran, *simFirst, float64(ex.faults)/float64(max(ex.ran, 1)))
	for _, f := range ex.failures {
		t.Error(f.String())
	}
}

// TestNextMachineNegativeControls: with each invariant's check removed,
// the simulator finds a violation, at the seed it first found one (the
// checker is not blind to what each invariant prevents).
func TestNextMachineNegativeControls(t *testing.T) {
	for _, c := range []struct {
		invariant string
		knobs     next.Knobs
		seed      uint64
	}{
		{"I1: epochs from what the server checked (the range check)", next.Knobs{NoRangeCheck: true}, 1691},
		{"I2: one LeaseTTL per cluster (each node its own)", next.Knobs{OwnTTL: true}, 14},
		{"I3: lead only on a confirmed landing", next.Knobs{NoConfirm: true}, 130},
	} {
		if out := Run(c.seed, Options{Next: true, NextKnobs: c.knobs}); !out.Failed() {
			t.Errorf("%s removed: seed %d found nothing", c.invariant, c.seed)
		} else {
			t.Logf("%s removed: seed %d: %s", c.invariant, c.seed, out.Violations[0])
		}
	}
}
