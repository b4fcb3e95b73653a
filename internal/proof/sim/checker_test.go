package sim

import (
	"strings"
	"testing"
	"time"
)

func tenureAt(node string, epoch int64, start, end time.Duration) *tenure {
	return &tenure{node: node, epoch: epoch, start: start, lostAt: end, deadline: 1 << 62}
}

func TestCheckerOverlapAndEpochs(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		name    string
		tenures []*tenure
		want    string // "" for none
	}{
		{"successive", []*tenure{tenureAt("a", 1, 0, 10*ms), tenureAt("b", 2, 10*ms, 20*ms)}, ""},
		{"overlap", []*tenure{tenureAt("a", 1, 0, 10*ms), tenureAt("b", 2, 9*ms, 20*ms)}, "tenures overlap"},
		{"epoch back", []*tenure{tenureAt("a", 2, 0, 10*ms), tenureAt("b", 1, 11*ms, 20*ms)}, "epoch did not grow"},
		{"epoch repeated", []*tenure{tenureAt("a", 2, 0, 10*ms), tenureAt("b", 2, 11*ms, 20*ms)}, "epoch did not grow"},
		// Become after its own deadline: never live, not counted.
		{"never live", []*tenure{tenureAt("a", 2, 0, 10*ms), tenureAt("b", 1, 11*ms, 11*ms), tenureAt("c", 3, 12*ms, 20*ms)}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ch := newChecker()
			ch.tenures = c.tenures
			v := ch.finish(30*ms, 0, 0)
			got := strings.Join(v, "; ")
			if c.want == "" && (strings.Contains(got, "overlap") || strings.Contains(got, "epoch")) {
				t.Fatalf("violations %q, want none", got)
			}
			if c.want != "" && !strings.Contains(got, c.want) {
				t.Fatalf("violations %q, want %q", got, c.want)
			}
		})
	}
}

// TestCheckerLiveness: no leader within the bound after faults stop is a
// violation; hooks still running then (a step-down draining behind a slow
// hook, docs/design.md §4.4) move the bound's start, and no further.
func TestCheckerLiveness(t *testing.T) {
	s := time.Second
	ttl := 3 * s // bound 8.5s
	for _, c := range []struct {
		name      string
		hooksDone time.Duration
		start     time.Duration // the first tenure after faults stop (at 20s)
		want      bool          // a violation
	}{
		{"leader in time", 0, 28 * s, false},
		{"leader late", 0, 29 * s, true},
		{"late, but hooks ran until 22s", 22 * s, 30 * s, false},
		{"hooks ran until 22s, leader later still", 22 * s, 31 * s, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ch := newChecker()
			ch.hooksDone = c.hooksDone
			ch.tenures = []*tenure{tenureAt("a", 1, 0, 19*s), tenureAt("b", 2, c.start, 40*s)}
			got := strings.Join(ch.finish(40*s, 20*s, ttl), "; ")
			if has := strings.Contains(got, "no leader within"); has != c.want {
				t.Fatalf("violations %q, want a liveness violation: %v", got, c.want)
			}
		})
	}
}
