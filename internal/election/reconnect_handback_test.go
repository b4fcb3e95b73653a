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
			steps: withPrefix(followB,
				mStep{100, Conn{Connected: false}, []string{"arm +*"}},
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
	} {
		t.Run(c.name, func(t *testing.T) { runMachineCase(t, c) })
	}
}
