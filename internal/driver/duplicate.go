package driver

// E14 on the watch (docs/design.md §6): another live process with this
// NodeID shows as records naming it under another instance.

import (
	"fmt"

	"github.com/ozanturksever/go-cluster/internal/election"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// foreignSelf counts the revisions of records naming this NodeID that
// another process (instance) wrote.
type foreignSelf struct {
	nodeID, instance string
	entries          int    // entries since Start, or since revisions went back
	seen             int    // foreign revisions counted
	rev              uint64 // the highest revision delivered
}

// note takes one watch entry. The first entry is a predecessor's, and one
// late write of its may follow: the second foreign revision after it is
// ErrDuplicateNodeID. Each revision counts once, as a reopened watch
// delivers the current one again; revisions that go back are a bucket
// created again, where counting starts over.
func (f *foreignSelf) note(e election.KVEntry) error {
	if e.Rev < f.rev {
		f.entries, f.seen = 0, 0
	} else if e.Rev == f.rev && f.entries > 0 {
		return nil
	}
	f.rev = e.Rev
	if f.entries++; f.entries == 1 || e.Op != election.Put {
		return nil
	}
	l, err := wire.DecodeLease(e.Value, e.Rev)
	if err != nil || l.Version != wire.Protocol || l.NodeID != f.nodeID || l.Instance == f.instance {
		return nil
	}
	if f.seen++; f.seen < 2 {
		return nil
	}
	return fmt.Errorf("%w: records of instance %q name %s", wire.ErrDuplicateNodeID, l.Instance, l.NodeID)
}
