package sim

import (
	"fmt"
	"reflect"
	"testing"
	"time"
)

// greedy is a deliberately unsafe election: it creates the lease key
// whenever it is absent (or a marker) and then leads for ever. A delete
// marker lets a second node lead beside the first: the checker must say so.
type greedy struct {
	id      string
	next    uint64
	leading bool
	now     time.Time
}

func (g *greedy) Deadline() (time.Time, bool) {
	if g.leading {
		return g.now.Add(time.Hour), true
	}
	return time.Time{}, false
}

func (g *greedy) Handle(now time.Time, ev Event) []Effect {
	g.now = now
	switch e := ev.(type) {
	case Result:
		if e.ID == g.next && e.Kind == ResultOK && !g.leading {
			g.leading = true
			return []Effect{Become{Epoch: int64(e.Rev)}, Arm{At: now.Add(50 * time.Millisecond)}}
		}
	case Tick:
		if !g.leading {
			g.next++
			return []Effect{Write{ID: g.next, Create: true, Value: []byte(fmt.Sprintf(`{"node_id":%q,"epoch":1}`, g.id)), Timeout: 100 * time.Millisecond},
				Arm{At: now.Add(50 * time.Millisecond)}}
		}
	}
	return []Effect{Arm{At: now.Add(50 * time.Millisecond)}}
}

func greedyFactory(cfg NodeConfig, _ BucketFacts, _ uint64) Logic { return &greedy{id: cfg.ID} }

// TestSimFindsAnUnsafeElection: the checker is not blind.
func TestSimFindsAnUnsafeElection(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		if out := Run(seed, Options{}, greedyFactory); out.Failed() {
			t.Logf("seed %d: %s", seed, out.Violations[0])
			if len(out.Trace) == 0 {
				t.Error("a failing seed came without its trace")
			}
			return
		}
	}
	t.Fatal("no violation in 200 seeds of an election that never steps down")
}

// TestSimIsDeterministic: a seed replays the identical run.
func TestSimIsDeterministic(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		a, b := Run(seed, Options{}, greedyFactory), Run(seed, Options{}, greedyFactory)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("seed %d ran twice differently:\n%v\n%v", seed, a, b)
		}
	}
}
