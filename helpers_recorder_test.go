package cluster

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// tenureRecord is one tenure as the application saw it, from
// OnBecomeLeader.
type tenureRecord struct {
	node  string
	epoch int64
	ctx   context.Context // the tenure ctx given to OnBecomeLeader
	start time.Time
	lose  time.Time // OnLoseLeadership began; zero until then
}

// recorder collects every node's hooks in one process, so tenures share a
// clock and can be checked against the invariants of docs/design.md §8.
type recorder struct {
	mu       sync.Mutex
	tenures  []*tenureRecord
	overlaps []string            // tenures still live when another began
	events   map[string][]string // per node: "become", "lose", "leader:<id>"
}

func newRecorder() *recorder { return &recorder{events: map[string][]string{}} }

// hooks returns Hooks for one node. epoch reads the node's epoch; extra, if
// set, is called too (after recording).
func (r *recorder) hooks(nodeID string, epoch func() int64, extra Hooks) Hooks {
	if extra == nil {
		extra = NoOpHooks{}
	}
	return HookFuncs{
		BecomeLeader: func(ctx context.Context) error {
			// The tenure's own epoch: epoch() reads the node's view, which
			// a late hook (its dispatcher was busy) finds moved on.
			e, ok := TenureEpoch(ctx)
			if !ok {
				e = epoch()
			}
			rec := &tenureRecord{node: nodeID, epoch: e, ctx: ctx, start: time.Now()}
			r.mu.Lock()
			// Exact, unlike comparing the end stamps below (taken on an
			// AfterFunc goroutine that may run late): when a tenure begins,
			// every other tenure's ctx must already be cancelled.
			// A hook that runs after its own tenure ended (its dispatcher
			// was busy) proves nothing either way.
			for _, prev := range r.tenures {
				if ctx.Err() == nil && prev.ctx.Err() == nil {
					r.overlaps = append(r.overlaps, fmt.Sprintf("%s (epoch %d) was live when %s (epoch %d) became leader",
						prev.node, prev.epoch, nodeID, rec.epoch))
				}
			}
			r.tenures = append(r.tenures, rec)
			r.events[nodeID] = append(r.events[nodeID], "become")
			r.mu.Unlock()
			return extra.OnBecomeLeader(ctx)
		},
		LoseLeadership: func(ctx context.Context) error {
			now := time.Now()
			r.mu.Lock()
			for i := len(r.tenures) - 1; i >= 0; i-- {
				if tr := r.tenures[i]; tr.node == nodeID {
					if tr.lose.IsZero() {
						tr.lose = now
					}
					break
				}
			}
			r.events[nodeID] = append(r.events[nodeID], "lose")
			r.mu.Unlock()
			return extra.OnLoseLeadership(ctx)
		},
		LeaderChange: func(ctx context.Context, leader string) error {
			r.mu.Lock()
			r.events[nodeID] = append(r.events[nodeID], "leader:"+leader)
			r.mu.Unlock()
			return extra.OnLeaderChange(ctx, leader)
		},
	}
}

func (r *recorder) count(nodeID, event string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.events[nodeID] {
		if e == event {
			n++
		}
	}
	return n
}

func (r *recorder) tenureCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.tenures)
}

// waitTenures waits until n tenures have begun OnBecomeLeader. A node
// reports that it leads (IsLeader) before its dispatcher gets to the hook
// (E3: hooks run on their own goroutine), so a test that saw a leader
// waits for its hook before counting tenures.
func (r *recorder) waitTenures(t testing.TB, n int) {
	t.Helper()
	natstest.WaitFor(t, 5*time.Second, func() bool { return r.tenureCount() >= n },
		"fewer than %d tenures began OnBecomeLeader within 5s", n)
}

// check asserts: tenures never overlap, OnLoseLeadership of a tenure
// starts before the next tenure does (an application that stops work in
// that hook, a VIP release say, must not overlap its successor), epochs
// strictly increase, and each node's Become/Lose alternate starting with
// Become.
func (r *recorder) check(t testing.TB) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	ts := append([]*tenureRecord(nil), r.tenures...)
	sort.Slice(ts, func(i, j int) bool { return ts[i].start.Before(ts[j].start) })
	for _, o := range r.overlaps {
		t.Errorf("tenures overlap: %s", o)
	}
	for i := 1; i < len(ts); i++ {
		prev, cur := ts[i-1], ts[i]
		if prev.lose.IsZero() || cur.start.Before(prev.lose) {
			t.Errorf("OnLoseLeadership of %s (epoch %d) began %v after %s (epoch %d) became leader",
				prev.node, prev.epoch, lateness(prev.lose, cur.start), cur.node, cur.epoch)
		}
		if cur.epoch <= prev.epoch {
			t.Errorf("epoch did not increase: %s had %d, then %s had %d", prev.node, prev.epoch, cur.node, cur.epoch)
		}
	}
	for node, evs := range r.events {
		want := "become"
		for _, e := range evs {
			if e != "become" && e != "lose" {
				continue
			}
			if e != want {
				t.Errorf("node %s: hooks out of order: %v", node, evs)
				break
			}
			if want == "become" {
				want = "lose"
			} else {
				want = "become"
			}
		}
	}
}

func lateness(lose, next time.Time) string {
	if lose.IsZero() {
		return "never"
	}
	return lose.Sub(next).Round(time.Millisecond).String()
}

// lastTenure returns the latest tenure, or nil.
// tenuresBelow counts the tenures recorded at an epoch below e. Each
// takeover of a record is one epoch above it (P2), so a tenure at e that
// took over from the first is at the bucket's first epoch plus this count,
// however many tenures a loaded machine let lapse before it.
func (r *recorder) tenuresBelow(e int64) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var n int64
	for _, tr := range r.tenures {
		if tr.epoch < e {
			n++
		}
	}
	return n
}

func (r *recorder) lastTenure() *tenureRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.tenures) == 0 {
		return nil
	}
	cp := *r.tenures[len(r.tenures)-1]
	return &cp
}
