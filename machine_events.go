package cluster

// The inputs of the election machine (machine.go): what the driver tells
// it. Every event is handled at the node's own monotonic now, which the
// driver passes with it; the machine reads no clock.

import "time"

// mEvent is one input of the machine.
type mEvent interface{ machineEvent() }

// entryOp is what a KV entry of the lease key is: a value, or a marker.
type entryOp int

const (
	opPut    entryOp = iota
	opDelete         // a delete marker
	opPurge          // a purge marker
)

// kvEntry is one revision of the lease key as the store shows it.
type kvEntry struct {
	rev   uint64
	op    entryOp
	value []byte
}

// evTick says time has passed: a timer the machine armed fired.
type evTick struct{}

// evEntry is an entry the watch delivered.
type evEntry struct{ entry kvEntry }

// evSynced is the watch's end of its initial values: the key's current
// value (or its absence) has been delivered.
type evSynced struct{}

// evWatchClosed says the watch's channel closed; the machine restarts it.
type evWatchClosed struct{}

// evConn is the connection's state: connected, and how many reconnects
// the connection has made (a change restarts the expiry count, §3.2).
type evConn struct {
	connected  bool
	reconnects uint64
}

// evHealth is one ReadinessCheck result.
type evHealth struct{ err error }

// evLoseStarted and evLoseDone say the dispatcher began and finished the
// OnLoseLeadership of the tenure with this epoch.
type evLoseStarted struct{ epoch int64 }

type evLoseDone struct{ epoch int64 }

// evStepDown is Node.StepDown(To). token names the caller, for its reply.
type evStepDown struct {
	to    string
	async bool
	token uint64
	// epoch, when set, is the tenure to end: a later one is left alone
	// (a failed OnBecomeLeader under LeaderHookErrorStepsDown).
	epoch int64
}

// evSetMetadata is Node.SetMetadata: publish metadata from now on.
type evSetMetadata struct {
	metadata map[string]string
	token    uint64
}

// evValidate is Node.ValidateLeadership: prove the tenure with a renewal.
type evValidate struct{ token uint64 }

// evStop is Node.Stop.
type evStop struct{ token uint64 }

// evControl is a step-down request that arrived over NATS, received at
// the node's now of received.
type evControl struct {
	data     []byte
	generic  bool
	received time.Time
	token    uint64
}

// evBucketCreated is the server's stream-created advisory for the bucket
// (advisory.go): the bucket may have been deleted and created again.
type evBucketCreated struct{}

// evResult answers a request action (actWrite, actGet, actHistory,
// actIncarnation, actWatch) with the same id. A permanent error wrapping
// ErrBucketDeleted says the bucket is gone (the driver confirmed it, as
// store.explain does; never for a renewal, as store.renew does not).
type evResult struct {
	id    uint64
	class errClass // of err; ignored when err is nil
	err   error
	// inFlight: a conflict that is a replicated stream's refusal of a
	// check on the lease subject while another was in flight
	// (inFlightRefusal): the revisions were not compared.
	inFlight bool
	// notFound: actGet found no value (absent key, or a marker).
	notFound bool
	rev      uint64    // actWrite: the new revision
	entry    kvEntry   // actGet
	history  []kvEntry // actHistory, oldest first
	// actIncarnation: a bucket other than the one known, and its stream's
	// last sequence.
	recreated bool
	lastSeq   uint64
}

func (evTick) machineEvent()          {}
func (evEntry) machineEvent()         {}
func (evSynced) machineEvent()        {}
func (evWatchClosed) machineEvent()   {}
func (evConn) machineEvent()          {}
func (evHealth) machineEvent()        {}
func (evLoseStarted) machineEvent()   {}
func (evLoseDone) machineEvent()      {}
func (evStepDown) machineEvent()      {}
func (evStop) machineEvent()          {}
func (evValidate) machineEvent()      {}
func (evSetMetadata) machineEvent()   {}
func (evControl) machineEvent()       {}
func (evBucketCreated) machineEvent() {}
func (evResult) machineEvent()        {}
