package sim

import (
	"time"

	"github.com/ozanturksever/go-cluster/internal/election"
)

// logic is one node's election: *election.Machine, or a test's stand-in
// for the checker's own tests. It takes an event at the node's own now
// and returns what to do; it must not read a clock or start goroutines.
type logic interface {
	Handle(now time.Time, ev election.Event) []election.Action
	// Snapshot's Tenure and Deadline are the live tenure's deadline on
	// the node's clock.
	Snapshot() election.View
}

// factory makes the logic of a node starting now (fresh memory).
type factory func(cfg election.Params, seed uint64) logic

// machines makes election machines with the run's knobs.
func machines(k election.Knobs) factory {
	return func(cfg election.Params, seed uint64) logic {
		cfg.Knobs = k
		return election.New(cfg, seed)
	}
}

// deadline is the live tenure's deadline on the node's clock; false when
// the node does not lead.
func deadline(l logic) (time.Time, bool) {
	v := l.Snapshot()
	return v.Deadline, v.Tenure
}
