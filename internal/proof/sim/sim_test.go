package sim

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/election"
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

func (g *greedy) Snapshot() election.View {
	if g.leading {
		return election.View{Tenure: true, Deadline: g.now.Add(time.Hour)}
	}
	return election.View{}
}

func (g *greedy) Handle(now time.Time, ev election.Event) []election.Action {
	g.now = now
	switch e := ev.(type) {
	case election.WriteResult:
		if e.ID == g.next && e.Err == nil && !g.leading {
			g.leading = true
			return []election.Action{election.Become{Epoch: int64(e.Rev)}, election.Arm{At: now.Add(50 * time.Millisecond)}}
		}
	case election.Tick:
		if !g.leading {
			g.next++
			return []election.Action{election.Write{ID: g.next, Create: true, Value: []byte(fmt.Sprintf(`{"node_id":%q,"epoch":1}`, g.id)), Timeout: 100 * time.Millisecond},
				election.Arm{At: now.Add(50 * time.Millisecond)}}
		}
	}
	return []election.Action{election.Arm{At: now.Add(50 * time.Millisecond)}}
}

func greedyFactory(cfg election.Params, _ uint64) logic {
	return &greedy{id: cfg.NodeID}
}

// TestSimFindsAnUnsafeElection: the checker is not blind.
func TestSimFindsAnUnsafeElection(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		if out := runWith(seed, Options{}, greedyFactory); out.Failed() {
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
		a, b := runWith(seed, Options{}, greedyFactory), runWith(seed, Options{}, greedyFactory)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("seed %d ran twice differently:\n%v\n%v", seed, a, b)
		}
	}
}
