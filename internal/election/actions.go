package election

// The outputs of the machine: what the driver carries out. A request
// (Write, Confirm, Watch) is answered by its own result type with the
// same ID; while one is out the machine makes no other.

import (
	"log/slog"
	"time"
)

// Action is one output of the machine.
type Action interface{ action() }

// Purpose says why the machine writes the lease key.
type Purpose int

// The purposes of a Write.
const (
	Acquire Purpose = iota // a new tenure
	Renew                  // the leader's renewal, or a drain's
	Release                // a drain's released record
)

func (p Purpose) String() string { return [...]string{"acquire", "renew", "release"}[p] }

// Cause says why the lease was free when a node won it (cluster.Cause).
type Cause string

// The causes of an election.
const (
	CauseCreated  Cause = "created"  // the key did not exist
	CauseReleased Cause = "released" // StepDown or Stop released it
	CauseExpired  Cause = "expired"  // the holder stopped renewing (or the value was garbage)
)

type (
	// Write writes Value under the lease key. Create: publish only if
	// the key has no entry and the stream's last sequence is LastSeq
	// (C3); otherwise a compare-and-swap on Rev (C1).
	Write struct {
		ID      uint64
		Purpose Purpose
		Create  bool
		LastSeq uint64
		Rev     uint64
		Value   []byte
		Timeout time.Duration
	}
	// Confirm reads the bucket's stream info (C4).
	Confirm struct {
		ID      uint64
		Timeout time.Duration
	}
	// Watch drops the watch, if any, and opens a new one on the lease
	// key; no entry of the old one may reach the machine after this.
	Watch struct {
		ID      uint64
		Timeout time.Duration
	}
	// Become starts the tenure at Epoch, live until its Lose or Deadline.
	Become struct {
		Epoch          int64
		Rev            uint64
		Sent, Deadline time.Time     // the landing write's send time, and the tenure's deadline
		TTL, Renew     time.Duration // the lease TTL the tenure runs on, and its renewal interval
		Cause          Cause
		Seen           time.Time // when the node first saw the value it took over; zero for an absent key
	}
	// Extend moves the tenure's deadline after an acknowledged renewal, sent
	// at Sent: it proves the tenure to calls made before then.
	Extend struct {
		Epoch    int64
		Deadline time.Time
		Sent     time.Time
	}
	// Lose ends the tenure at Epoch and queues OnLoseLeadership.
	Lose struct {
		Epoch int64
		Cause error
	}
	// LeaderChange queues OnLeaderChange.
	LeaderChange struct{ Leader string }
	// AskToLead asks the holder, over its control subject, to hand over
	// to this node, of Priority (P13).
	AskToLead struct {
		Holder   string
		Priority int
	}
	// CooldownKey records cooldown-<NodeID> (informational, no answer).
	CooldownKey struct{ Cooldown time.Duration }
	// Reply answers the StepDown named by Token: Epoch is the tenure it
	// ended.
	Reply struct {
		Token uint64
		Err   error
		Epoch int64
	}
	// Finished says the machine is done: Stop, or the permanent error Err.
	Finished struct{ Err error }
	// Log is a line for the node's log.
	Log struct {
		Level slog.Level
		Msg   string
		Args  []any
	}
	// Arm asks for a Tick at At (zero: none needed).
	Arm struct{ At time.Time }
)

func (Write) action()        {}
func (Confirm) action()      {}
func (Watch) action()        {}
func (Become) action()       {}
func (Extend) action()       {}
func (Lose) action()         {}
func (LeaderChange) action() {}
func (AskToLead) action()    {}
func (CooldownKey) action()  {}
func (Reply) action()        {}
func (Finished) action()     {}
func (Log) action()          {}
func (Arm) action()          {}
