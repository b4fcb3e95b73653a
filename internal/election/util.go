package election

import "time"

// Cause says why the lease was free when a node won it
// (cluster.Cause).
type Cause string

// The causes of an election.
const (
	CauseCreated  Cause = "created"  // the key did not exist
	CauseReleased Cause = "released" // StepDown or Stop released it
	CauseExpired  Cause = "expired"  // the holder stopped renewing (or the value was garbage)
)

// readiness is what the machine knows of this node's ReadinessCheck.
type readiness struct {
	passed bool  // a check has passed since Start
	fails  int   // consecutive failed checks
	last   error // the last check's error, nil if it passed
}

// earliest returns the earliest non-zero time.
func earliest(times ...time.Time) time.Time {
	var out time.Time
	for _, t := range times {
		if !t.IsZero() && (out.IsZero() || t.Before(out)) {
			out = t
		}
	}
	return out
}
