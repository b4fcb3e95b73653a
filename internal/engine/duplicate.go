package engine

// E14 on the watch (docs/design.md §6): another live process with this
// NodeID shows as records naming it under another instance.

import (
	"fmt"
	"slices"

	"github.com/ozanturksever/go-cluster/internal/election"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// foreignSelf counts the revisions of records naming this NodeID that
// another process (instance) wrote, within one incarnation of the bucket.
type foreignSelf struct {
	nodeID, instance string
	inc              election.Incarnation // the incarnation counted in, as first confirmed
	known            bool                 // inc is set
	first            bool                 // an entry was delivered in inc
	history          uint64               // revisions up to it are a predecessor's, written before this process looked
	counted          []uint64             // the foreign revisions above history, each once
}

// confirmed takes the bucket a Confirm read. The first Confirm of an
// incarnation comes before its first watch: its last sequence bounds what
// was written before this process looked. A later one of the same
// incarnation moves nothing (a live duplicate's renewals would hide below
// it); another incarnation starts counting over.
func (f *foreignSelf) confirmed(b election.Incarnation) {
	if f.known && f.inc.Same(b) {
		return
	}
	*f = foreignSelf{nodeID: f.nodeID, instance: f.instance, inc: b, known: true, history: b.LastSeq}
}

// note takes one watch entry. Records up to the incarnation's history,
// and the first entry, are a predecessor's; one late write of its may
// follow: the second foreign revision above them is ErrDuplicateNodeID.
// Each revision counts once, whatever the watch delivers: a watch opened
// again (an R1 consumer on any replica) on one that lags shows an older
// revision first and then replays those seen (chaos seed 99).
func (f *foreignSelf) note(e election.KVEntry) error {
	if !f.first {
		f.first, f.history = true, max(f.history, e.Rev)
		return nil
	}
	if e.Rev <= f.history || e.Op != election.Put || slices.Contains(f.counted, e.Rev) {
		return nil
	}
	l, err := wire.DecodeLease(e.Value, e.Rev)
	if err != nil || l.Version < wire.Protocol || l.NodeID != f.nodeID || l.Instance == f.instance {
		return nil
	}
	if f.counted = append(f.counted, e.Rev); len(f.counted) < 2 {
		return nil
	}
	return fmt.Errorf("%w: records of instance %q name %s", wire.ErrDuplicateNodeID, l.Instance, l.NodeID)
}

// noteBucket hands E14 the bucket a Confirm read, before the machine
// takes the answer.
func (d *driver) noteBucket(ev election.Event) {
	if c, ok := ev.(election.ConfirmResult); ok && c.Err == nil {
		d.self.confirmed(c.Bucket)
	}
}
