package election

// The inputs of the machine, each handled at the node's own monotonic now.

import "time"

// Event is one input of the machine.
type Event interface{ event() }

// Op is what a KV entry of the lease key is: a value, or a marker.
type Op int

// The kinds of entry.
const (
	Put Op = iota
	Delete
	Purge
)

// KVEntry is one revision of the lease key as the watch shows it.
type KVEntry struct {
	Rev   uint64
	Op    Op
	Value []byte
}

type (
	// Start begins the machine: it confirms the bucket, then watches.
	Start struct{}
	// Tick says a timer the machine armed fired.
	Tick struct{}
	// Entry is an entry the watch delivered.
	Entry struct{ KV KVEntry }
	// Synced says the watch has delivered the key's current value (or
	// its absence).
	Synced struct{}
	// WatchClosed says the watch's channel closed.
	WatchClosed struct{}
	// Conn is the connection's state; a new Reconnects count restarts
	// every wait (P3).
	Conn struct {
		Connected  bool
		Reconnects uint64
	}
	// Readiness says whether ReadinessCheck lets this node campaign: the
	// driver counts the results and sends it when that changes (P14).
	Readiness struct{ Ready bool }
	// LoseHook says OnLoseLeadership of the tenure at Epoch began, or
	// returned (Done).
	LoseHook struct {
		Epoch int64
		Done  bool
	}
	// StepDown is Node.StepDown(To), or a step-down request over NATS
	// received at Received (the driver decodes it and renders the Reply).
	// Epoch, when set, is the tenure to end; Preempt asks on behalf of a
	// node of Priority (P13). Async: the Reply comes when the drain
	// begins, not after the release.
	StepDown struct {
		To       string
		Epoch    int64
		Preempt  bool
		Priority int
		Received time.Time
		Async    bool
		Token    uint64
	}
	// Stop is Node.Stop: the machine drains a tenure, then Finishes.
	Stop struct{}
	// Validate is Node.ValidateLeadership: a live tenure renews at once;
	// the driver answers with its next Extend, or wire.ErrNotLeader at Lose.
	Validate struct{}
	// SetMetadata is Node.SetMetadata: the next records carry it, and a
	// live tenure renews at once.
	SetMetadata struct{ Metadata map[string]string }
	// Abort stops the machine with a permanent error the driver found
	// (E14: wire.ErrDuplicateNodeID).
	Abort struct{ Err error }
	// SetPriority is Node.SetPriority: the priority this node's records
	// carry, its requests ask with and its answers judge by, from now on.
	SetPriority struct{ Priority int }
)

// ErrClass says what the election does after an error of a request.
type ErrClass int

// The classes of a request's error.
const (
	Transient ErrClass = iota // retry with backoff; outcome of a write unknown
	Conflict                  // lost a compare-and-swap
	Permanent                 // stop campaigning and surface it
)

// The answers to the requests (actions.go), each with its request's ID.
type (
	// WriteResult answers a Write: the revision it landed at, or why
	// not.
	WriteResult struct {
		ID    uint64
		Rev   uint64
		Err   error
		Class ErrClass // of Err
	}
	// ConfirmResult answers a Confirm. Err wrapping wire.ErrBucketDeleted
	// (class Permanent) says the bucket is gone.
	ConfirmResult struct {
		ID     uint64
		Bucket Incarnation
		Err    error
		Class  ErrClass
	}
	// WatchStarted answers a Watch: the new watch runs (entries then
	// Synced follow), or it could not be opened.
	WatchStarted struct {
		ID    uint64
		Err   error
		Class ErrClass
	}
)

func (Start) event()         {}
func (Tick) event()          {}
func (Entry) event()         {}
func (Synced) event()        {}
func (WatchClosed) event()   {}
func (Conn) event()          {}
func (Readiness) event()     {}
func (LoseHook) event()      {}
func (StepDown) event()      {}
func (Stop) event()          {}
func (Validate) event()      {}
func (SetMetadata) event()   {}
func (SetPriority) event()   {}
func (Abort) event()         {}
func (WriteResult) event()   {}
func (ConfirmResult) event() {}
func (WatchStarted) event()  {}
