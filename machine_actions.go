package cluster

// The outputs of the election machine (machine.go): what the driver
// carries out. A request action (actWrite, actGet, actHistory,
// actIncarnation, actWatch) is answered by an evResult with its id; while
// one is out, the machine makes no other request.

import (
	"log/slog"
	"time"
)

// mAction is one output of the machine.
type mAction interface{ machineAction() }

// writePurpose says why the machine writes the lease key.
type writePurpose int

const (
	writeAcquire      writePurpose = iota // a new tenure
	writeRenew                            // the leader's renewal
	writeRelease                          // a drain's released record
	writeReleaseStale                     // give back a record of an ended tenure
	writeSeed                             // a floor record (§5.3)
)

func (p writePurpose) String() string {
	return [...]string{"acquire", "renew", "release", "release-stale", "seed"}[p]
}

// actWrite writes value under the lease key: when create is set, a
// compare-and-swap on revision 0, which fails on any entry, a marker too
// (store.create, rule 23); otherwise a compare-and-swap on rev. timeout
// bounds the request.
type actWrite struct {
	id      uint64
	purpose writePurpose
	create  bool
	rev     uint64
	value   []byte
	timeout time.Duration
}

// actGet reads the lease key (a hint, never proof).
type actGet struct {
	id      uint64
	timeout time.Duration
}

// actHistory reads every revision the bucket keeps of the lease key.
type actHistory struct {
	id      uint64
	timeout time.Duration
}

// actIncarnation reads the bucket's identity and last sequence.
type actIncarnation struct {
	id      uint64
	timeout time.Duration
}

// actWatch drops the watch, if any, and starts a new one on the lease
// key; an evResult with its id answers. Entries of the old watch must not
// reach the machine after this action.
type actWatch struct {
	id      uint64
	timeout time.Duration
}

// actUnwatch drops the watch (the bucket is gone); no answer. Entries of
// the old watch must not reach the machine after this action.
type actUnwatch struct{}

// actBecome queues OnBecomeLeader for a tenure at epoch; its ctx is live
// until actLose for that epoch, or until the tenure's deadline passes
// (machine.tenure). cause and wait are the election's, for the metrics.
type actBecome struct {
	epoch    int64
	rev      uint64
	deadline time.Time
	cause    ElectionCause
	wait     time.Duration // how long the node saw the lease before it won
}

// actLose cancels the tenure at epoch and queues OnLoseLeadership.
type actLose struct {
	epoch int64
	cause error
}

// actLeaderChange queues OnLeaderChange.
type actLeaderChange struct{ leader string }

// actAskToLead publishes a priority request to the holder's control subject.
type actAskToLead struct {
	holder string
	req    StepDownRequest
}

// actCooldownKey records cooldown-<NodeID> (informational, no answer).
type actCooldownKey struct{ d time.Duration }

// actReply answers a command or a control request named by token.
type actReply struct {
	token   uint64
	err     error         // commands: nil on success
	epoch   int64         // a validation that succeeded: the proven epoch
	control bool          // a control request: reply is the answer
	silent  bool          // a control request nobody answers (not for this node)
	reply   StepDownReply // control requests
}

// actFail reports a permanent error: the node stops.
type actFail struct{ err error }

// actFinished says the machine is done (Stop, or a permanent error).
type actFinished struct{}

// actLog is a line for the node's log: what the machine decided and why.
type actLog struct {
	level slog.Level
	msg   string
	args  []any
}

// actArm asks for an evTick at at (zero: no timer needed).
type actArm struct{ at time.Time }

func (actWrite) machineAction()        {}
func (actGet) machineAction()          {}
func (actHistory) machineAction()      {}
func (actIncarnation) machineAction()  {}
func (actWatch) machineAction()        {}
func (actUnwatch) machineAction()      {}
func (actBecome) machineAction()       {}
func (actLose) machineAction()         {}
func (actLeaderChange) machineAction() {}
func (actAskToLead) machineAction()    {}
func (actCooldownKey) machineAction()  {}
func (actReply) machineAction()        {}
func (actFail) machineAction()         {}
func (actFinished) machineAction()     {}
func (actArm) machineAction()          {}
func (actLog) machineAction()          {}
