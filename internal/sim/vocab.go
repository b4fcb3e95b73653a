package sim

import "time"

// Logic is one node's election: it takes an Event at the node's own now
// and returns what to do. It must not read a clock or start goroutines.
type Logic interface {
	Handle(now time.Time, ev Event) []Effect
	// Deadline is the live tenure's deadline on the node's clock; false
	// when the node does not lead.
	Deadline() (time.Time, bool)
}

// NodeConfig is what a Factory needs to make a node.
type NodeConfig struct {
	ID             string
	LeaseTTL       time.Duration
	RenewInterval  time.Duration
	SafetyMargin   time.Duration // zero means zero here, not a default
	RequestTimeout time.Duration
	Priority       int
	// Bug1 asks the logic to reintroduce bug 1 (wait only the TTL of what
	// the key holds now): a negative control.
	Bug1 bool
	// NoRule31 asks the logic to undo rule 31 (a floor record's revision
	// as an epoch floor): a negative control.
	NoRule31 bool
	// NoRule50 asks the logic to undo rule 50 (a bucket's epochs start at
	// its creation time): a negative control.
	NoRule50 bool
	// Fixes names fixes under evaluation the logic should apply.
	Fixes []string
}

// BucketFacts are what a node learns of the bucket when it opens it.
type BucketFacts struct {
	LastSeq uint64
	Age     time.Duration
	Created time.Time // on the creating server's clock (rule 50)
}

// Factory makes the logic of a node starting now (fresh memory).
type Factory func(cfg NodeConfig, facts BucketFacts, seed uint64) Logic

// Op is what an entry of the lease key is.
type Op int

// Entry operations.
const (
	OpPut Op = iota
	OpDelete
	OpPurge
)

// Entry is one revision of the lease key.
type Entry struct {
	Rev   uint64
	Op    Op
	Value []byte
}

// Event is an input of a node's Logic.
type Event interface{ simEvent() }

// Tick: the timer the logic armed fired.
type Tick struct{}

// EntryEvent: the watch delivered an entry.
type EntryEvent struct{ Entry Entry }

// Synced: the watch delivered the key's current value.
type Synced struct{}

// WatchClosed: the watch's channel closed.
type WatchClosed struct{}

// Conn: the connection's state changed.
type Conn struct {
	Connected  bool
	Reconnects uint64
}

// LoseStarted and LoseDone: OnLoseLeadership of epoch began, returned.
type LoseStarted struct{ Epoch int64 }

// LoseDone: see LoseStarted.
type LoseDone struct{ Epoch int64 }

// StepDown: the API StepDown(To).
type StepDown struct {
	To    string
	Token uint64
}

// Stop: the API Stop.
type Stop struct{ Token uint64 }

// Control: a step-down request over NATS on the node's own subject.
type Control struct {
	Data     []byte
	Received time.Time
	Token    uint64
}

// BucketCreated: the server's stream-created advisory for the bucket,
// delivered to campaigning nodes that are connected when it is created.
type BucketCreated struct{}

// ResultKind sorts a request's outcome.
type ResultKind int

// Result kinds.
const (
	ResultOK ResultKind = iota
	ResultConflict
	ResultNotFound
	ResultTimeout
	// ResultBucketDeleted: the bucket does not exist (as the store's
	// bucket lookup confirms it).
	ResultBucketDeleted
)

// Result answers a request effect with the same ID.
type Result struct {
	ID        uint64
	Kind      ResultKind
	Rev       uint64    // a write: the new revision
	Entry     Entry     // a get
	History   []Entry   // a history read
	Recreated bool      // an incarnation read
	LastSeq   uint64    // an incarnation read
	Created   time.Time // an incarnation read: the bucket's creation on its server's clock
	inc       uint64    // an incarnation read: the identity the node now knows
}

func (Tick) simEvent()          {}
func (EntryEvent) simEvent()    {}
func (Synced) simEvent()        {}
func (WatchClosed) simEvent()   {}
func (Conn) simEvent()          {}
func (LoseStarted) simEvent()   {}
func (LoseDone) simEvent()      {}
func (StepDown) simEvent()      {}
func (Control) simEvent()       {}
func (Stop) simEvent()          {}
func (Result) simEvent()        {}
func (BucketCreated) simEvent() {}

// Effect is an output of a node's Logic.
type Effect interface{ simEffect() }

// Write writes the lease key: Create, or a CAS on Rev.
type Write struct {
	ID      uint64
	Create  bool
	Rev     uint64
	Value   []byte
	Timeout time.Duration
}

// Get reads the lease key.
type Get struct {
	ID      uint64
	Timeout time.Duration
}

// History reads the revisions kept of the lease key.
type History struct {
	ID      uint64
	Timeout time.Duration
}

// Incarnation reads the bucket's identity and last sequence.
type Incarnation struct {
	ID      uint64
	Timeout time.Duration
}

// Watch replaces the watch.
type Watch struct {
	ID      uint64
	Timeout time.Duration
}

// Unwatch drops the watch (no answer).
type Unwatch struct{}

// Arm asks for a Tick at At on the node's clock (zero: none).
type Arm struct{ At time.Time }

// Become queues OnBecomeLeader for a tenure at Epoch.
type Become struct{ Epoch int64 }

// Lose ends the tenure at Epoch and queues OnLoseLeadership.
type Lose struct{ Epoch int64 }

// Ask publishes a step-down request to Holder's control subject.
type Ask struct {
	Holder string
	Data   []byte
}

// Reply answers a StepDown or Control with Token.
type Reply struct {
	Token uint64
	OK    bool
}

// Cooldown records the cooldown key (a write to another key).
type Cooldown struct{}

// Finished: the node has stopped (Stop, or a permanent error in Err).
type Finished struct{ Err error }

func (Write) simEffect()       {}
func (Get) simEffect()         {}
func (History) simEffect()     {}
func (Incarnation) simEffect() {}
func (Watch) simEffect()       {}
func (Unwatch) simEffect()     {}
func (Arm) simEffect()         {}
func (Become) simEffect()      {}
func (Lose) simEffect()        {}
func (Ask) simEffect()         {}
func (Reply) simEffect()       {}
func (Cooldown) simEffect()    {}
func (Finished) simEffect()    {}
