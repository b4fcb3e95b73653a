package election

// P1 and P2: what a value of the key is, and the epoch a node writes
// over it (docs/design.md §2.4).

import (
	"fmt"
	"math"
	"time"

	"github.com/ozanturksever/go-cluster/internal/wire"
)

// Kind is what the key holds, as one node sees it.
type Kind int

// The kinds of value (P1).
const (
	None     Kind = iota // nothing seen yet
	Absent               // no entry: absent at a stream sequence
	Held                 // a record naming a holder
	Released             // a record naming none: a hand-back
	Unknown              // anything else: garbage, a marker, another version, an epoch out of range
)

func (k Kind) String() string {
	return [...]string{"none", "absent", "held", "released", "unknown"}[k]
}

// decoded is one value of the key judged by P1.
type decoded struct {
	kind  Kind
	lease wire.Lease // Version 0: protocol 1, or no record at all
	why   string     // why it is unknown
}

// judgeRange applies P1 to a watch entry in an incarnation whose epochs
// are above base; ranged false leaves the epoch's range unchecked
// (Knobs.NoRangeCheck).
func judgeRange(e KVEntry, base int64, ranged bool) decoded {
	if e.Op != Put {
		return decoded{kind: Unknown, why: "a delete or purge marker"}
	}
	l, err := wire.DecodeLease(e.Value, e.Rev)
	if err != nil {
		return decoded{kind: Unknown, why: err.Error()}
	}
	d := decoded{lease: l}
	switch {
	case l.Version != wire.Protocol:
		d.kind, d.why = Unknown, fmt.Sprintf("written by protocol %d", l.Version)
	case ranged && (l.Epoch <= base || uint64(l.Epoch-base) > e.Rev):
		d.kind, d.why = Unknown, fmt.Sprintf("epoch %d outside (%d, %d]", l.Epoch, base, base+int64(min(e.Rev, math.MaxInt64/2)))
	case l.NodeID == "":
		d.kind = Released
	default:
		d.kind = Held
	}
	return d
}

// nextEpoch is P2: over a held or released record at rev, its epoch +1;
// over an unknown value at rev, base + rev + 1; into a key absent at
// lastSeq, base + lastSeq + 1.
func nextEpoch(kind Kind, epoch int64, rev, lastSeq uint64, base int64) (int64, error) {
	from := epoch
	switch kind {
	case Unknown:
		from = addSeq(base, rev)
	case Absent:
		from = addSeq(base, lastSeq)
	}
	if from == math.MaxInt64 {
		return 0, fmt.Errorf("%w: no epoch above %d", ErrEpochExhausted, from)
	}
	return from + 1, nil
}

// addSeq is base + seq, saturating at the largest int64.
func addSeq(base int64, seq uint64) int64 {
	if seq > uint64(math.MaxInt64-base) {
		return math.MaxInt64
	}
	return base + int64(seq)
}

// held encodes a held record of this node.
func (m *Machine) held(epoch int64, ttl time.Duration, acquired, now time.Time) []byte {
	return wire.Lease{NodeID: m.p.NodeID, Epoch: epoch, TTLMillis: ttl.Milliseconds(),
		AcquiredAt: acquired.UTC(), ExpiresAt: now.Add(ttl).UTC(), Priority: m.p.Priority,
		Metadata: m.p.Metadata, Instance: m.p.Instance}.Encode()
}
