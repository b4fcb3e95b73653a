package election

import (
	"testing"
)

// Rule 52 (simulator seed 197203): a hand-back learned right after the
// connection came back may have waited in the old watch's buffer while the
// bucket was created again; its revision may name another node's live
// record there. The bucket's identity is asked before the compare-and-swap.
func TestMachineHandBackAfterReconnect(t *testing.T) {
	for _, c := range []mCase{
		{name: "rule 52: a release handed back, learned as the connection comes back, is taken only after the identity check",
			steps: withPrefix(append(withPrefix(followB,
				mStep{100, Conn{Connected: false}, []string{"arm +*"}}),
				ticksUntil(200, 4000)...), // the loop runs: a reconnect, not a hold (rule 57)
				mStep{4100, Conn{Connected: true, Reconnects: 1}, []string{"incarnation", "arm -"}}, // rule 53
				mStep{4100, released(6, 3, ""), []string{"arm -"}},                                  // kept
				mStep{4101, incarnation(false, 6), []string{"incarnation", "leader -", "arm -"}},
				mStep{4102, incarnation(false, 6), []string{"write acquire rev=6 epoch=4", "arm -"}},
			)},
		{name: "rule 52: a release handed back well after a reconnect is taken at once (the handover's one write)",
			steps: withPrefix(followB,
				mStep{100, Conn{Connected: false}, []string{"arm +*"}},
				mStep{200, Conn{Connected: true, Reconnects: 1}, []string{"incarnation", "arm -"}}, // rule 53
				mStep{201, incarnation(false, 5), []string{"arm +*"}},
				mStep{600, released(6, 3, ""), []string{"write acquire rev=6 epoch=4", "leader -", "arm -"}},
			)},
		{name: "rule 57: a release handed back, learned as the loop resumes from a hold longer than RenewInterval, is taken only after the identity check",
			// Simulator seed 130895: n4 paused 1.8 s, its connection kept;
			// its watch's buffer handed back a release of a bucket deleted
			// since, and its compare-and-swap landed in the new one.
			steps: withPrefix(followB,
				mStep{2500, released(6, 3, ""), []string{"incarnation", "leader -", "arm -"}},
				mStep{2501, incarnation(false, 6), []string{"write acquire rev=6 epoch=4", "arm -"}},
			)},
		{name: "rule 57: a timer a little late (under RenewInterval) is no hold: the hand-back is taken at once",
			steps: withPrefix(followB,
				mStep{700, released(6, 3, ""), []string{"write acquire rev=6 epoch=4", "leader -", "arm -"}},
			)},
	} {
		t.Run(c.name, func(t *testing.T) { runMachineCase(t, c) })
	}
}

// ticksUntil ticks the machine every 200ms from from to until (ms), its
// actions unchecked: a loop that runs on time, as a driver's does.
func ticksUntil(from, until int) []mStep {
	var steps []mStep
	for ms := from; ms <= until; ms += 200 {
		steps = append(steps, mStep{ms, Tick{}, nil})
	}
	return steps
}
