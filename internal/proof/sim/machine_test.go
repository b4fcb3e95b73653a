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
)

// The simulator against the election machine (internal/election,
// docs/design.md): every fault kind, raw purges and the bucket's
// TTL changed on a live cluster, judged with no limit excused. Flags:
//
//	go test -run '^TestMachineSim$' ./internal/proof/sim -sim.seeds=1000000   a million seeds
//	go test -run '^TestMachineSim$' ./internal/proof/sim -sim.seed=1234 -v    replay one, with its trace
//	    -sim.node=n2                                               ... and every event of n2
//	-sim.exclude=purge,raw-purge       fault kinds left out
//	-sim.off=ack|range|ttl|clusterttl|behind|check  an invariant's check removed: a negative control
var (
	simSeeds   = flag.Int("sim.seeds", 2000, "how many seeds TestMachineSim explores (200 with -short or -race)")
	simFirst   = flag.Uint64("sim.first", 1, "the first seed TestMachineSim explores")
	simSeed    = flag.Uint64("sim.seed", 0, "replay this one seed (and print its trace)")
	simExclude = flag.String("sim.exclude", "", "comma-separated fault kinds not to inject")
	simSameTTL = flag.Bool("sim.samettl", false, "give every node LeaseTTL 1s")
	simMaxFail = flag.Int("sim.maxfail", 3, "stop after this many failing seeds")
	simNode    = flag.String("sim.node", "", "with -sim.seed: trace every event and effect of this node")
	simNoFirst = flag.Bool("sim.nofirstseq", false, "create buckets with revisions from 1: the negative control of revisions that name their incarnation")
	simNoCeil  = flag.Bool("sim.ceilingunreadisnone", false, "answer a Confirm that could not read the members bucket's ceiling without it: the negative control of failing it")
	simOff     = flag.String("sim.off", "", "comma-separated invariants whose check is removed (ack, range, ttl, clusterttl, behind, check, members): a negative control")
)

func simOptionsFromFlags(t *testing.T) Options {
	return Options{Exclude: splitList(*simExclude), SameTTL: *simSameTTL, Knobs: knobs(t, splitList(*simOff)), NoFirstSeq: *simNoFirst, CeilingUnreadIsNone: *simNoCeil}
}

// knobs are the machine's knobs -sim.off names.
func knobs(t *testing.T, names []string) election.Knobs {
	var k election.Knobs
	for _, n := range names {
		switch n {
		case "ack":
			k.NoAck = true
		case "clusterttl":
			k.NoClusterTTL = true
		case "behind":
			k.TrustBehind = true
		case "check":
			k.NoCheck = true
		case "range":
			k.NoRangeCheck = true
		case "ttl":
			k.OwnTTL = true
		case "members":
			k.SwitchEarly = true
		default:
			t.Fatalf("-sim.off: unknown invariant %q (want ack, range, ttl, clusterttl, behind, check or members)", n)
		}
	}
	return k
}

// explored is what exploreSeeds found.
type explored struct {
	failures  []Outcome     // at most the max asked for
	ran       int           // seeds run
	faults    int64         // faults injected in all
	simulated time.Duration // simulated real time in all
	upgraded  int           // seeds whose cluster moved to the next protocol version
}

// exploreSeeds runs count seeds from first on the machine's cores.
func exploreSeeds(first uint64, count, maxFailures int, opt Options) explored {
	var (
		next      atomic.Uint64
		ran       atomic.Int64
		faults    atomic.Int64
		simulated atomic.Int64 // nanoseconds
		upgraded  atomic.Int64
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
				if out.Upgraded {
					upgraded.Add(1)
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
	return explored{failures: failures, ran: int(ran.Load()), faults: faults.Load(), simulated: time.Duration(simulated.Load()), upgraded: int(upgraded.Load())}
}

// TestMachineSim explores seeds of the simulator against the machine:
// no overlap, epochs grow, a leader after faults stop, handovers finish.
// CI runs more seeds (.ci/run); -sim.seeds sets how many.
func TestMachineSim(t *testing.T) {
	opt := simOptionsFromFlags(t)
	if *simSeed != 0 {
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
	if (testing.Short() || raceEnabled) && !flagSet("sim.seeds") {
		// One seed runs on one goroutine: the race detector has little
		// to find and makes it ten times slower. CI explores the seeds
		// without it (.ci/run).
		count = min(count, 200)
	}
	start := time.Now()
	ex := exploreSeeds(*simFirst, count, *simMaxFail, opt)
	el := time.Since(start)
	t.Logf("explored %d seeds from %d in %v: %.0f seeds/s", ex.ran, *simFirst, el.Round(time.Millisecond), float64(ex.ran)/el.Seconds())
	if ex.ran > 0 {
		t.Logf("%.1f faults per seed; %.1f simulated hours in all, %.1f simulated hours per real minute",
			float64(ex.faults)/float64(ex.ran), ex.simulated.Hours(), ex.simulated.Hours()/el.Minutes())
		t.Logf("%d seeds moved their cluster to the next protocol version in a rolling upgrade", ex.upgraded)
	}
	for _, f := range ex.failures {
		t.Error(f.String())
	}
}

// TestMachineNegativeControls: with each invariant's check removed, or
// an assumption of the run broken, the simulator finds a violation at a
// seed known to show it (the checker is not blind to what each
// prevents): the first failing seed of each.
func TestMachineNegativeControls(t *testing.T) {
	for _, c := range []struct {
		name string
		opt  Options
		seed uint64
	}{
		{"I1 removed: epochs from what the server checked (the range check)", Options{Knobs: election.Knobs{NoRangeCheck: true}}, 1},
		{"I2 removed: one LeaseTTL per cluster (each node its own)", Options{Knobs: election.Knobs{OwnTTL: true}}, 19},
		{"I2's ceiling in the members bucket ignored: a bucket created again trusted for its TTL", Options{Knobs: election.Knobs{NoClusterTTL: true}}, 794},
		{"I2's ceiling unread taken for none: a Confirm that could not read the members bucket followed", Options{CeilingUnreadIsNone: true}, 18297},
		{"I3 removed: lead only on an acknowledged landing", Options{Knobs: election.Knobs{NoAck: true}}, 1},
		{"revisions that do not name their incarnation (no first_seq; epochs from an epoch_base)", Options{NoFirstSeq: true}, 46},
		{"C4 trusted: a Confirm from a server behind followed", Options{Knobs: election.Knobs{TrustBehind: true}}, 430},
		{"P7's check removed: a value taken over unconfirmed", Options{Knobs: election.Knobs{NoCheck: true}}, 1},
		{"clock drift beyond SafetyMargin", Options{DriftBound: 0.25}, 6},
		{"SafetyMargin 0 with drift inside the default bound", Options{MarginZero: true, DriftBound: 0.03}, 6},
		{"the clock assumption broken: a bucket created again reads a time before the previous creation", Options{ClockBack: true}, 1},
		{"P16 removed: a leader moves the cluster to its highest protocol before every member speaks it", Options{Knobs: election.Knobs{SwitchEarly: true}}, 5},
	} {
		if out := Run(c.seed, c.opt); !out.Failed() {
			t.Errorf("%s: seed %d found nothing", c.name, c.seed)
		} else {
			t.Logf("%s: seed %d: %s", c.name, c.seed, out.Violations[0])
		}
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
