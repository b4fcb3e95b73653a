package sim

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/election"
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
// hook, docs/design.md §4.4) move the bound's start, and no further; a
// landing covered with a floor in the quiet phase, before the bound ran
// out (rule 38: its check's answers were lost), gives a TTL and a second
// from the floor, and no more (seeds 42854, 919766).
func TestCheckerLiveness(t *testing.T) {
	s, ms := time.Second, time.Millisecond
	ttl := 3 * s // bound 7s
	for _, c := range []struct {
		name      string
		hooksDone time.Duration
		covers    []time.Duration // landings covered with a floor (rule 38)
		start     time.Duration   // the first tenure after faults stop (at 20s)
		want      bool            // a violation
	}{
		{"leader in time", 0, nil, 26 * s, false},
		{"leader late", 0, nil, 28 * s, true},
		{"late, but hooks ran until 22s", 22 * s, nil, 28 * s, false},
		{"hooks ran until 22s, leader later still", 22 * s, nil, 30 * s, true},
		// A floor over a landing is waited out: TTL and a second from it.
		{"late, but a landing covered with a floor at 24.5s", 0, []time.Duration{24500 * ms}, 28 * s, false},
		{"covered at 24.5s, leader later still", 0, []time.Duration{24500 * ms}, 29 * s, true},
		{"covered at 24.5s and again at 28s", 0, []time.Duration{24500 * ms, 28 * s}, 31 * s, false},
		{"covered three times in a row: the third is not waited for", 0, []time.Duration{24500 * ms, 28 * s, 31 * s}, 34 * s, true},
		{"covered before faults stopped", 0, []time.Duration{19 * s}, 28 * s, true},
		{"covered after the bound had run out", 0, []time.Duration{27500 * ms}, 28 * s, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ch := newChecker()
			ch.hooksDone = c.hooksDone
			ch.covers = c.covers
			ch.tenures = []*tenure{tenureAt("a", 1, 0, 19*s), tenureAt("b", 2, c.start, 40*s)}
			got := strings.Join(ch.finish(40*s, 20*s, ttl), "; ")
			if has := strings.Contains(got, "no leader within"); has != c.want {
				t.Fatalf("violations %q, want a liveness violation: %v", got, c.want)
			}
		})
	}
}

// TestCoversOwn: only a floor over the node's own held record at the
// floor's epoch is a landing covered (rules 35, 38, 40); a floor over
// another's record, a lower epoch (rule 43) or a floor, and a release,
// are not.
func TestCoversOwn(t *testing.T) {
	held := func(node string, epoch int) election.KVEntry {
		return election.KVEntry{Rev: 3, Op: election.Put, Value: fmt.Appendf(nil, `{"node_id":%q,"epoch":%d,"ttl_ms":1000}`, node, epoch)}
	}
	floor := func(epoch int) []byte {
		return fmt.Appendf(nil, `{"node_id":"","epoch":%d,"ttl_ms":1000,"floor":true}`, epoch)
	}
	for _, c := range []struct {
		name  string
		prev  election.KVEntry
		value []byte
		want  bool
	}{
		{"its own landing covered", held("n1", 7), floor(7), true},
		{"another node's record", held("n2", 7), floor(7), false},
		{"its own record at a lower epoch (rule 43)", held("n1", 6), floor(7), false},
		{"a floor over a floor", election.KVEntry{Rev: 3, Op: election.Put, Value: floor(7)}, floor(7), false},
		{"a release", held("n1", 7), []byte(`{"node_id":"","epoch":7,"ttl_ms":1000}`), false},
		{"a marker", election.KVEntry{Rev: 3, Op: election.Purge}, floor(7), false},
	} {
		if got := coversOwn(c.prev, c.value, "n1"); got != c.want {
			t.Errorf("%s: coversOwn = %v, want %v", c.name, got, c.want)
		}
	}
}
