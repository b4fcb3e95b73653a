package election

// The outputs of the election machine (machine.go): what the driver
// carries out. A request action (Write, Get, History,
// Incarnation, Watch) is answered by an Result with its id; while
// one is out, the machine makes no other request.

import (
	"log/slog"
	"time"
)

// Action is one output of the machine.
type Action interface{ machineAction() }

// Purpose says why the machine writes the lease key.
type Purpose int

const (
	Acquire      Purpose = iota // a new tenure
	Renew                       // the leader's renewal
	Release                     // a drain's released record
	ReleaseStale                // give back a record of an ended tenure
	Seed                        // a floor record (§5.3)
)

func (p Purpose) String() string {
	return [...]string{"acquire", "renew", "release", "release-stale", "seed"}[p]
}

// Write writes value under the lease key: when create is set, a
// compare-and-swap on revision 0, which fails on any entry, a marker too
// (store.create, rule 23); otherwise a compare-and-swap on rev. timeout
// bounds the request.
type Write struct {
	ID      uint64
	Purpose Purpose
	Create  bool
	Rev     uint64
	Value   []byte
	Timeout time.Duration
	// CheckLastSeq: a Create also checked against the stream's last
	// sequence LastSeq. Only the next machine (internal/election/v2, run
	// by the simulator) sets it.
	CheckLastSeq bool
	LastSeq      uint64
}

// Get reads the lease key (a hint, never proof).
type Get struct {
	ID      uint64
	Timeout time.Duration
}

// History reads every revision the bucket keeps of the lease key.
type History struct {
	ID      uint64
	Timeout time.Duration
}

// Incarnation reads the bucket's identity and last sequence.
type Incarnation struct {
	ID      uint64
	Timeout time.Duration
}

// Watch drops the watch, if any, and starts a new one on the lease
// key; an Result with its id answers. Entries of the old watch must not
// reach the machine after this action.
type Watch struct {
	ID      uint64
	Timeout time.Duration
}

// Unwatch drops the watch (the bucket is gone); no answer. Entries of
// the old watch must not reach the machine after this action.
type Unwatch struct{}

// Become queues OnBecomeLeader for a tenure at epoch; its ctx is live
// until Lose for that epoch, or until the tenure's deadline passes
// (lead.go, become). cause and wait are the election's, for the metrics.
type Become struct {
	Epoch    int64
	Rev      uint64
	Deadline time.Time
	Cause    Cause
	Wait     time.Duration // how long the node saw the lease before it won
}

// Lose cancels the tenure at epoch and queues OnLoseLeadership.
type Lose struct {
	Epoch int64
	Cause error
}

// LeaderChange queues OnLeaderChange.
type LeaderChange struct{ Leader string }

// AskToLead publishes a priority request to the holder's control subject.
type AskToLead struct {
	Holder  string
	Request StepDownRequest
}

// CooldownKey records cooldown-<NodeID> (informational, no answer).
type CooldownKey struct{ Cooldown time.Duration }

// Reply answers a command or a control request named by token.
type Reply struct {
	Token   uint64
	Err     error         // commands: nil on success
	Epoch   int64         // a validation that succeeded: the proven epoch
	Control bool          // a control request: reply is the answer
	Silent  bool          // a control request nobody answers (not for this node)
	Answer  StepDownReply // control requests
}

// Fail reports a permanent error: the node stops.
type Fail struct{ Err error }

// Finished says the machine is done (Stop, or a permanent error).
type Finished struct{}

// Log is a line for the node's log: what the machine decided and why.
type Log struct {
	Level slog.Level
	Msg   string
	Args  []any
}

// Arm asks for an Tick at at (zero: no timer needed).
type Arm struct{ At time.Time }

func (Write) machineAction()        {}
func (Get) machineAction()          {}
func (History) machineAction()      {}
func (Incarnation) machineAction()  {}
func (Watch) machineAction()        {}
func (Unwatch) machineAction()      {}
func (Become) machineAction()       {}
func (Lose) machineAction()         {}
func (LeaderChange) machineAction() {}
func (AskToLead) machineAction()    {}
func (CooldownKey) machineAction()  {}
func (Reply) machineAction()        {}
func (Fail) machineAction()         {}
func (Finished) machineAction()     {}
func (Arm) machineAction()          {}
func (Log) machineAction()          {}
