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
