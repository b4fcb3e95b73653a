package sim

// Records out of range: a well-formed record of this protocol, written by
// an operator's tool or a bug, whose epoch is outside its incarnation's
// range (docs/design.md §2.4, §5.1), as internal/proof/chaos writes them
// against real servers: epoch 1, the incarnation's base, or one above
// base + index. P1 judges each unknown; a node that took one for a record
// would wait its TTL and write its epoch + 1, below what was led before,
// or out of range for the next. A stream of its own, so that every other
// draw of a seed stays as it was.

import (
	"math/rand/v2"
	"time"

	"github.com/ozanturksever/go-cluster/internal/election"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

const outOfRangeName = "out-of-range"

// scheduleOutOfRange plans this seed's records out of range, in half the
// seeds, every 0.5 to 4 s of the fault phase.
func (w *world) scheduleOutOfRange() {
	r := rand.New(rand.NewPCG(w.seed, 0x0072))
	if r.IntN(2) != 0 || w.excluded(outOfRangeName) {
		return
	}
	for t := time.Duration(r.Int64N(int64(2 * time.Second))); t < w.quietAt; t += 500*time.Millisecond + time.Duration(r.Int64N(int64(3500*time.Millisecond))) {
		at, released := r.IntN(3), r.IntN(2) == 0
		w.at(t, func() { w.writeOutOfRange(at, released) })
	}
}

// writeOutOfRange appends a record out of range, held by "ghost" for 1 s
// or released: at epoch 1, at the base, or above base + index of its
// revision.
func (w *world) writeOutOfRange(at int, released bool) {
	if w.kv.deleted || w.now >= w.quietAt {
		return
	}
	inc := w.kv.info(w.now)
	base := int64(inc.FirstSeq) - 1
	epoch := []int64{1, base, int64(w.kv.seq) + 2}[at] // the record lands at seq+1: base + index is seq+1
	l := wire.Lease{NodeID: "ghost", Epoch: max(epoch, 1), TTLMillis: 1000, Instance: "ghost",
		ExpiresAt: base0, AcquiredAt: base0}
	if released {
		l.NodeID, l.TTLMillis, l.Instance = "", 0, ""
	}
	w.kv.append(election.Put, l.Encode())
	w.logf("OUT OF BAND: a record out of range, epoch %d at revision %d", l.Epoch, w.kv.seq)
	w.entryAdded()
}

// base0 is the records' wall-clock times: for people only.
var base0 = base
