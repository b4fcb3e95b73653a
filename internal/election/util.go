package election

// Cause says why the lease was free when a node won it
// (cluster.Cause).
type Cause string

// The causes of an election.
const (
	CauseCreated  Cause = "created"  // the key did not exist
	CauseReleased Cause = "released" // StepDown or Stop released it
	CauseExpired  Cause = "expired"  // the holder stopped renewing (or the value was garbage)
)
