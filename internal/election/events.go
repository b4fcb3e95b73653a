package election

// The inputs of the election machine (machine.go): what the driver tells
// it. Every event is handled at the node's own monotonic now, which the
// driver passes with it; the machine reads no clock.

import "time"

// Event is one input of the machine.
type Event interface{ machineEvent() }

// Op is what a KV entry of the lease key is: a value, or a marker.
type Op int

const (
	Put    Op = iota
	Delete    // a delete marker
	Purge     // a purge marker
)

// KVEntry is one revision of the lease key as the store shows it.
type KVEntry struct {
	Rev   uint64
	Op    Op
	Value []byte
}

// Tick says time has passed: a timer the machine armed fired.
type Tick struct{}

// Entry is an entry the watch delivered.
type Entry struct{ KV KVEntry }

// Synced is the watch's end of its initial values: the key's current
// value (or its absence) has been delivered.
type Synced struct{}

// WatchClosed says the watch's channel closed; the machine restarts it.
type WatchClosed struct{}

// Conn is the connection's state: connected, and how many reconnects
// the connection has made (a change restarts the expiry count, §3.2).
type Conn struct {
	Connected  bool
	Reconnects uint64
}

// Health is one ReadinessCheck result.
type Health struct{ Err error }

// LoseStarted and LoseDone say the dispatcher began and finished the
// OnLoseLeadership of the tenure with this epoch.
type LoseStarted struct{ Epoch int64 }

type LoseDone struct{ Epoch int64 }

// StepDown is Node.StepDown(To). token names the caller, for its reply.
type StepDown struct {
	To    string
	Async bool
	Token uint64
	// epoch, when set, is the tenure to end: a later one is left alone
	// (a failed OnBecomeLeader under LeaderHookErrorStepsDown).
	Epoch int64
}

// SetMetadata is Node.SetMetadata: publish metadata from now on.
type SetMetadata struct {
	Metadata map[string]string
	Token    uint64
}

// Validate is Node.ValidateLeadership: prove the tenure with a renewal.
type Validate struct{ Token uint64 }

// Stop is Node.Stop.
type Stop struct{ Token uint64 }

// Control is a step-down request that arrived over NATS, received at
// the node's now of received.
type Control struct {
	Data     []byte
	Generic  bool
	Received time.Time
	Token    uint64
}

// BucketCreated is the server's stream-created advisory for the bucket
// (package cluster, advisory.go): the bucket may have been deleted and
// created again.
type BucketCreated struct{}

// Result answers a request action (Write, Get, History,
// Incarnation, Watch) with the same id. A permanent error wrapping
// ErrBucketDeleted says the bucket is gone (the driver confirmed it, as
// store.explain does; never for a renewal, as store.renew does not).
type Result struct {
	ID    uint64
	Class ErrClass // of err; ignored when err is nil
	Err   error
	// inFlight: a conflict that is a replicated stream's refusal of a
	// check on the lease subject while another was in flight
	// (inFlightRefusal): the revisions were not compared.
	InFlight bool
	// notFound: Get found no value (absent key, or a marker).
	NotFound bool
	Rev      uint64    // Write: the new revision
	Entry    KVEntry   // Get
	History  []KVEntry // History, oldest first
	// Incarnation: a bucket other than the one known, and its stream's
	// last sequence.
	Recreated bool
	LastSeq   uint64
	// Created is the bucket's creation time as the Incarnation read it
	// (zero when unknown): the epoch base of a bucket created again.
	Created time.Time
	// Age, LeaseTTL and MaxTTL: the bucket's age on the server's clock
	// and its TTL metadata, as an Incarnation read them. Only the next
	// machine (internal/election/v2, run by the simulator) reads them.
	Age              time.Duration
	LeaseTTL, MaxTTL time.Duration
}

func (Tick) machineEvent()          {}
func (Entry) machineEvent()         {}
func (Synced) machineEvent()        {}
func (WatchClosed) machineEvent()   {}
func (Conn) machineEvent()          {}
func (Health) machineEvent()        {}
func (LoseStarted) machineEvent()   {}
func (LoseDone) machineEvent()      {}
func (StepDown) machineEvent()      {}
func (Stop) machineEvent()          {}
func (Validate) machineEvent()      {}
func (SetMetadata) machineEvent()   {}
func (Control) machineEvent()       {}
func (BucketCreated) machineEvent() {}
func (Result) machineEvent()        {}
