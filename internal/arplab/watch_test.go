package arplab

import (
	"slices"
	"testing"
	"time"
)

// TestSplitBrain checks how the observer's probe answers are read: an
// answer belongs to the last probe before it; both hosts answering one
// probe, or a host answering again after the other did, is a split brain.
func TestSplitBrain(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	probes := []time.Time{at(0), at(2), at(4), at(6), at(8)}
	reply := func(ms int, mac string) seen { return seen{at: at(ms), mac: mac, reply: true} }
	for _, tc := range []struct {
		name       string
		seen       []seen
		both       int
		unanswered int
		backAgain  bool
		silent     time.Duration
		quiet      time.Duration
		answerers  []string
	}{
		{"clean handover", []seen{reply(1, "a"), reply(3, "a"), {at: at(5), mac: "b", garp: true}, reply(7, "b")}, 0, 1, false, 4 * time.Millisecond, 4 * time.Millisecond, []string{"a", "b"}},
		{"one probe answered by both", []seen{reply(1, "a"), reply(3, "a"), reply(3, "b"), reply(5, "b")}, 1, 0, false, 0, 3 * time.Millisecond, []string{"a", "b"}},
		{"back again", []seen{reply(1, "a"), reply(3, "b"), reply(5, "a")}, 0, 0, true, 2 * time.Millisecond, 3 * time.Millisecond, []string{"a", "b", "a"}},
		{"outside the window", []seen{reply(1, "a"), reply(9, "b")}, 0, 2, false, 0, 7 * time.Millisecond, []string{"a"}},
		{"nobody", nil, 0, 3, false, 0, 8 * time.Millisecond, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &Watch{seen: tc.seen, probes: probes}
			got := w.SplitBrain(at(0), at(8))
			if got.Probes != 4 || got.Both != tc.both || got.Unanswered != tc.unanswered || got.BackAgain != tc.backAgain ||
				got.Silent != tc.silent || got.Quiet != tc.quiet || !slices.Equal(got.Answerers, tc.answerers) {
				t.Fatalf("got %+v, want 4 probes, both %d, unanswered %d, back again %v, silent %v, quiet %v, answerers %v",
					got, tc.both, tc.unanswered, tc.backAgain, tc.silent, tc.quiet, tc.answerers)
			}
			if got.Overlap() != (tc.both > 0 || tc.backAgain) {
				t.Fatalf("overlap %v for %+v", got.Overlap(), got)
			}
		})
	}
	w := &Watch{seen: []seen{reply(1, "a"), reply(5, "b")}, probes: probes}
	w.Forget(at(4))
	if len(w.seen) != 1 || len(w.probes) != 3 {
		t.Fatalf("after Forget: %d seen, %d probes; want 1 and 3", len(w.seen), len(w.probes))
	}
}
