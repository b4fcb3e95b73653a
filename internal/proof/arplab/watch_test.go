package arplab

import (
	"net/netip"
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
	var probes []probe
	for i := range 5 {
		probes = append(probes, probe{at: at(2 * i), tag: netip.AddrFrom4([4]byte{192, 0, 2, byte(150 + i)})})
	}
	// reply is mac's answer received at ms to the last probe sent before it.
	reply := func(ms int, mac string) seen {
		return seen{at: at(ms), mac: mac, reply: true, tag: probes[min((ms-1)/2, len(probes)-1)].tag}
	}
	// late is mac's answer to probe i, received at ms.
	late := func(ms, i int, mac string) seen { return seen{at: at(ms), mac: mac, reply: true, tag: probes[i].tag} }
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
		// a's answer to probe 0, received only after probe 2 was sent, then b's
		// to probe 2: a handover, not both at once.
		{"received late", []seen{late(5, 0, "a"), reply(5, "b"), reply(7, "b")}, 0, 1, false, 0, 5 * time.Millisecond, []string{"a", "b"}},
		{"one probe answered by both, received late", []seen{late(5, 1, "a"), late(5, 1, "b")}, 1, 2, false, 0, 5 * time.Millisecond, []string{"a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &Watch{seen: tc.seen, probes: probes}
			got := w.SplitBrain(at(0), at(8))
			if got.Probes != 4 || got.Both != tc.both || got.Unanswered != tc.unanswered || got.BackAgain != tc.backAgain ||
				got.Silent != tc.silent || got.Quiet != tc.quiet || !slices.Equal(got.Answerers, tc.answerers) {
				t.Fatalf("got %+v, want 4 probes, both %d, unanswered %d, back again %v, silent %v, quiet %v, answerers %v",
					got, tc.both, tc.unanswered, tc.backAgain, tc.silent, tc.quiet, tc.answerers)
			}
			if (got.FirstBoth != nil) != (tc.both > 0) || got.FirstBoth != nil && len(got.FirstBoth.Answers) < 2 {
				t.Fatalf("first probe answered by both: %v, for %d such probes", got.FirstBoth, tc.both)
			}
			if got.Overlap() != (tc.both > 0 || tc.backAgain) {
				t.Fatalf("overlap %v for %+v", got.Overlap(), got)
			}
		})
	}
	// An answer that came 30 ms after its probe, which the other host had
	// answered at once: late, not both.
	slow := &Watch{probes: probes, seen: []seen{late(1, 0, "b"), late(30, 0, "a")}}
	if got := slow.SplitBrain(at(0), at(40)); got.Both != 0 || got.Late != 1 || got.LateMax != 30*time.Millisecond {
		t.Fatalf("an answer 30 ms after its probe: %+v; want it late (1, 30ms), not both", got)
	}
	w := &Watch{seen: []seen{reply(1, "a"), reply(5, "b")}, probes: probes}
	w.Forget(at(4))
	if len(w.seen) != 1 || len(w.probes) != 3 {
		t.Fatalf("after Forget: %d seen, %d probes; want 1 and 3", len(w.seen), len(w.probes))
	}
}
