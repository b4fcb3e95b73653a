package sim

import (
	"flag"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/election"
	next "github.com/ozanturksever/go-cluster/internal/election/v2"
)

// The simulator against the election machine (internal/election).
//
// The default run injects every fault kind; TestMachineSimKnownGaps shows
// each stated limit the simulator still finds (docs/sim.md), and -sim.fix
// tries the fixes under evaluation. Flags:
//
//	go test -run 'MachineSim$' ./internal/sim -sim.seeds=1000000   a million seeds
//	go test -run 'MachineSim$' ./internal/sim -sim.seed=1234 -v    replay one, with its trace
//	    -sim.node=n2                                        ... and every event of n2
//	-sim.exclude=forged -sim.fix=revfloor                 a fault kind left out, the fix tried
//
// beforeRule50 are the fault kinds the default run left out until rule 50
// (a bucket's epochs start at its creation time) closed the gaps they
// found: the seeds found then replay with them left out.
var beforeRule50 = []string{"forged", "recreate", "bucket-delete"}

var (
	simSeeds   = flag.Int("sim.seeds", 10000, "how many seeds TestMachineSim explores")
	simFirst   = flag.Uint64("sim.first", 1, "the first seed TestMachineSim explores")
	simSeed    = flag.Uint64("sim.seed", 0, "replay this one seed (and print its trace)")
	simExclude = flag.String("sim.exclude", "", "comma-separated fault kinds not to inject")
	simFixes   = flag.String("sim.fix", "", "fixes under evaluation: revfloor (docs/sim.md)")
	simSameTTL = flag.Bool("sim.samettl", false, "give every node LeaseTTL 1s")
	simMaxFail = flag.Int("sim.maxfail", 3, "stop after this many failing seeds")
	simStrict  = flag.Bool("sim.strict", false, "count the stated limits (an epoch or a LeaseTTL nothing left knew) as violations too")
	simNode    = flag.String("sim.node", "", "with -sim.seed: trace every event and effect of this node")
	simNext    = flag.Bool("sim.next", false, "run the next machine (internal/election/v2, docs/design-next.md) instead")
	simNextOff = flag.String("sim.nextoff", "", "with -sim.next: invariants whose check is removed (confirm, range, ttl): a negative control")
)

func simOptionsFromFlags(t *testing.T) Options {
	return Options{Exclude: splitList(*simExclude), StrictLimits: *simStrict, Knobs: fixes(t, splitList(*simFixes)), SameTTL: *simSameTTL, Next: *simNext, NextKnobs: nextKnobs(t, splitList(*simNextOff))}
}

// fixes are the knobs of the fixes under evaluation that -sim.fix names.
func fixes(t *testing.T, names []string) election.Knobs {
	var k election.Knobs
	for _, f := range names {
		switch f {
		case "revfloor":
			k.RevisionFloorAlways = true
		default:
			t.Fatalf("-sim.fix: unknown fix %q", f)
		}
	}
	return k
}

// nextKnobs are the next machine's knobs -sim.nextoff names.
func nextKnobs(t *testing.T, names []string) next.Knobs {
	var k next.Knobs
	for _, n := range names {
		switch n {
		case "confirm":
			k.NoConfirm = true
		case "range":
			k.NoRangeCheck = true
		case "ttl":
			k.OwnTTL = true
		default:
			t.Fatalf("-sim.nextoff: unknown invariant %q", n)
		}
	}
	return k
}

// explored is what exploreSeeds found.
type explored struct {
	failures  []Outcome     // at most the max asked for
	ran       int           // seeds run
	forgotten int           // seeds with an epoch nothing left knew (excused)
	blind     int           // seeds with an overlap beside a LeaseTTL nothing left knew (excused)
	faults    int64         // faults injected in all
	simulated time.Duration // simulated real time in all
}

// exploreSeeds runs count seeds from first on the machine's cores.
func exploreSeeds(first uint64, count, maxFailures int, opt Options) explored {
	var (
		next      atomic.Uint64
		ran       atomic.Int64
		forgotten atomic.Int64
		blind     atomic.Int64
		faults    atomic.Int64
		simulated atomic.Int64 // nanoseconds
		mu        sync.Mutex
		failures  []Outcome
		wg        sync.WaitGroup
	)
	next.Store(first)
	for range min(runtime.GOMAXPROCS(0), 2) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				seed := next.Add(1) - 1
				if seed >= first+uint64(count) {
					return
				}
				mu.Lock()
				enough := len(failures) >= maxFailures
				mu.Unlock()
				if enough {
					return
				}
				out := Run(seed, opt)
				ran.Add(1)
				faults.Add(int64(out.Faults))
				simulated.Add(int64(out.Simulated))
				if out.Forgotten > 0 {
					forgotten.Add(1)
				}
				if out.BlindOverlaps > 0 {
					blind.Add(1)
				}
				if out.Failed() {
					mu.Lock()
					failures = append(failures, out)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return explored{failures: failures, ran: int(ran.Load()), forgotten: int(forgotten.Load()), blind: int(blind.Load()),
		faults: faults.Load(), simulated: time.Duration(simulated.Load())}
}

// TestMachineSim explores seeds of the simulator against the machine:
// no overlap, epochs grow, a leader after faults stop, handovers finish.
func TestMachineSim(t *testing.T) {
	if *simSeed != 0 {
		opt := simOptionsFromFlags(t)
		opt.TraceNode = *simNode
		out := Run(*simSeed, opt)
		t.Log(out.String())
		for _, l := range out.Trace {
			t.Log(l)
		}
		if out.Failed() {
			t.Fail()
		}
		return
	}
	count := *simSeeds
	switch {
	case testing.Short():
		count = min(count, 500)
	case raceEnabled && !flagSet("sim.seeds"):
		// One seed runs on one goroutine: the race detector has little
		// to find and makes it ten times slower. CI explores the seeds
		// without it (.ci/run); here a thousand check the binding.
		count = min(count, 1000)
	}
	start := time.Now()
	ex := exploreSeeds(*simFirst, count, *simMaxFail, simOptionsFromFlags(t))
	el := time.Since(start)
	t.Logf("explored %d seeds from %d in %v: %.0f seeds/s; stated limits, excused: %d with an epoch nothing left knew (§5.4, §5.5), %d with an overlap beside a LeaseTTL nothing left knew (§5.6)",
		ex.ran, *simFirst, el.Round(time.Millisecond), float64(ex.ran)/el.Seconds(), ex.forgotten, ex.blind)
	if ex.ran > 0 {
		t.Logf("%.1f faults per seed; %.1f simulated hours in all, %.1f simulated hours per real minute",
			float64(ex.faults)/float64(ex.ran), ex.simulated.Hours(), ex.simulated.Hours()/el.Minutes())
	}
	for _, f := range ex.failures {
		t.Error(f.String())
	}
}

// defaultSimOptions is the run TestMachineSim makes without flags: every
// fault kind.
func defaultSimOptions() Options { return Options{} }

// optionsBeforeRule50 is the default run before rule 50: the seeds found
// then replay with its fault kinds.
func optionsBeforeRule50() Options { return Options{Exclude: beforeRule50} }

// findViolation searches seeds from 1 for the first violation under opt,
// and reports it; it fails the test if none is found in count seeds.
func findViolation(t *testing.T, count int, opt Options) {
	t.Helper()
	start := time.Now()
	ex := exploreSeeds(1, count, 1, opt)
	if len(ex.failures) == 0 {
		t.Fatalf("no violation in %d seeds", ex.ran)
	}
	f := ex.failures[0]
	t.Logf("found in %v (%d seeds run): seed %d: %s", time.Since(start).Round(time.Millisecond), ex.ran, f.Seed, f.Violations[0])
}

// TestMachineSimNegativeControls: the checker finds what it must find.
// Each control breaks one assumption of the default run.
func TestMachineSimNegativeControls(t *testing.T) {
	for _, c := range []struct {
		name   string
		break_ func(*Options)
	}{
		{"clock drift beyond SafetyMargin", func(o *Options) { o.DriftBound = 0.25 }},
		{"SafetyMargin 0 with drift inside the default bound", func(o *Options) { o.MarginZero, o.DriftBound = true, 0.03 }},
		{"bug 1: waiting the TTL of what the key holds now", func(o *Options) { o.Knobs.ShortTTLForNonRecords, o.MixedTTL = true, true }},
		{"rule 31 undone: taking over a floor record from its writer's memory only", func(o *Options) { o.Knobs.FloorWithoutRevision = true }},
		{"rule 50 undone: a bucket's epochs start at 1", func(o *Options) { o.Knobs.NoEpochBase = true }},
		{"rule 50's assumption broken: a server creating the bucket again reads a time before the previous creation", func(o *Options) { o.ClockBack = true }},
	} {
		t.Run(c.name, func(t *testing.T) {
			opt := defaultSimOptions()
			c.break_(&opt)
			findViolation(t, 3000, opt)
		})
	}
}

// TestMachineSimKnownGaps replays, for each gap the simulator finds in
// main's rules (docs/sim.md, gap A) and the stated §5.6 limit, a
// seed that fails that way, and checks that it still does. When main
// closes a gap, its row fails: move it to TestMachineSimClosedGaps.
func TestMachineSimKnownGaps(t *testing.T) {
	for _, c := range []struct {
		name string
		seed uint64
		opt  Options
		want string
	}{
		{"§5.6 (stated): a new bucket elects a short-TTL node beside a cut-off long-TTL holder",
			6899, Options{StrictLimits: true}, "tenures overlap: n2 epoch "},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := Run(c.seed, c.opt)
			if !out.Failed() || !strings.Contains(out.Violations[0], c.want) {
				t.Fatalf("seed %d no longer fails with %q: %v", c.seed, c.want, out.Violations)
			}
			t.Logf("seed %d: %s", c.seed, out.Violations[0])
		})
	}
}

// TestMachineSimExcusesTheStatedTTLLimit: an overlap beside a longer
// LeaseTTL nothing left knew (docs/design.md §5.6) is counted, not
// failed; -sim.strict fails it. Seed 6899 is the §5.6 row of
// TestMachineSimKnownGaps. The negative control "bug 1" shows the excuse
// does not cover a node that knew the longer TTL.
func TestMachineSimExcusesTheStatedTTLLimit(t *testing.T) {
	opt := Options{}
	out := Run(6899, opt)
	if out.Failed() || out.BlindOverlaps == 0 {
		t.Fatalf("seed 6899: want the overlap excused, got %d excused and %v", out.BlindOverlaps, out.Violations)
	}
	opt.StrictLimits = true
	if out := Run(6899, opt); !out.Failed() {
		t.Fatal("seed 6899 with StrictLimits: no violation")
	}
}

// TestMachineSimClosedGaps replays the seed of each gap main has closed
// since the simulator found it (docs/sim.md): it must pass now.
func TestMachineSimClosedGaps(t *testing.T) {
	for _, c := range []struct {
		name string
		seed uint64
		opt  Options
	}{
		{"H: a hand-back learned as the connection comes back is taken after the identity check (rule 52; the million-seed run at 1db0fd7)",
			197203, Options{}},
		{"a reconnect asks the bucket's identity, as the advisory it missed would have (rule 53; the million-seed run at 1db0fd7)",
			645781, Options{}},
		{"a leader's renewal conflict asks a kept advisory's identity first (rule 54; the million-seed run at 1db0fd7)",
			354333, Options{}},
		{"I: after a raw purge a node with no memory writes a floor over the absent key at once, and the node that knew the longer TTL writes its own over it (rule 55; the million-seed run at 1db0fd7)",
			641169, Options{}},
		{"... the same, the long-TTL holder still leading, its renewal's answer dropped (rule 55)", 914359, Options{}},
		{"... the same, the long-TTL holder crashed, the node that knew its TTL healed as the node started (rule 55)", 366271, Options{}},
		{"... the same, the long-TTL holder crashed; a connected node knew its TTL (rule 55; fails with it undone)", 466893, Options{}},
		{"... the same, the long-TTL holder's bucket check timed out (rule 55; fails with it undone)", 877070, Options{}},
		{"a leader whose renewal conflict finds its bucket created again takes the new bucket's epoch base (rule 56; the million-seed run at 1db0fd7)",
			147622, Options{}},
		{"... the same, 895441", 895441, Options{}},
		{"a hand-back learned as the loop resumes from a pause (connection kept) is taken after the identity check (rule 57; the million-seed run at 1db0fd7)",
			130895, Options{}},
		{"F: a deleted bucket is waited for as long as the node runs (rule 29, no grace left to count)",
			35, Options{}},
		{"G: a Create that landed after writes it did not see leads nothing (rule 35; million-seed run)",
			339308, optionsBeforeRule50()},
		{"B: records the watch showed, dropped unread with it, still teach their epochs (rule 36)",
			1235, Options{Exclude: []string{"forged"}}},
		{"C: an older entry from a new bucket moves the node to it, watch and all (rule 37)",
			274, Options{Exclude: []string{"forged"}}},
		{"D: the bucket created again between the identity check and the takeover's compare-and-swap (rule 38)",
			2479, Options{}},
		// Found once rules 35-38 had moved the schedules; each failed on
		// that code, before its rule.
		{"a stale record of its own, learned before a pause, released into a bucket created since (rule 39)",
			2262, Options{}},
		{"an acquire out when the node followed a new bucket landed there and led (rule 40)",
			17919, Options{Exclude: []string{"forged", "bucket-delete"}}},
		{"a leader learned of a new bucket only through renewals a slow network held up (rule 41)",
			3030, Options{Exclude: []string{"forged", "bucket-delete"}}},
		{"a landing the key moved past while its check was out is not led (rule 45; million-seed run at aa14c52)",
			633042, optionsBeforeRule50()},
		{"A: a forged record below the bucket's first epoch, taken over after the first sight, counts its revision (rule 50)",
			498, Options{Exclude: []string{"recreate", "bucket-delete"}}},
		// Every fault kind, at b4cbb1e: 4 of 5,000 seeds failed (and
		// 144 were excused as §5.4/§5.5 limits). Each passes now.
		{"every fault kind before rule 50: a bucket created again, or a forged low record, while nothing remembered the epoch",
			929, Options{}},
		{"... the same, 1453", 1453, Options{}},
		{"... the same, 2487", 2487, Options{}},
		{"... the same, 4130", 4130, Options{}},
		{"E: a held record below the epoch a running node remembers is corrected (rule 43)",
			4733, Options{Exclude: []string{"bucket-delete"}, Knobs: election.Knobs{RevisionFloorAlways: true}}},
		// Not the machine's: the checker's liveness bound left out the
		// stated drain (§4.4, rule 9). A StepDown just before faults stop,
		// its OnLoseLeadership queued behind a slow OnBecomeLeader (2·TTL).
		{"liveness: a step-down draining behind a slow OnBecomeLeader (million-seed run)", 625830, optionsBeforeRule50()},
		{"liveness: the same, StepDownTo (million-seed run)", 810921, optionsBeforeRule50()},
		{"liveness: the same, a third schedule (million-seed run)", 872943, optionsBeforeRule50()},
		// Not the machine's either: the bound left out rule 38's stated
		// cost. Answers lost in the quiet phase left a landing's check
		// unanswered until its deadline; the floor over it (rule 38) is
		// waited out like a held lease (§5.3). Million-seed run at 1db0fd7.
		{"liveness: a landing whose check went unanswered, covered with a floor and waited out (rule 38)", 919766, Options{}},
		{"liveness: the same, in a bucket created again as faults stopped", 42854, Options{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if out := Run(c.seed, c.opt); out.Failed() {
				t.Fatalf("seed %d: %v", c.seed, out.Violations)
			}
		})
	}
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// flagSet says the flag was given on the command line.
func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
