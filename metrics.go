package cluster

import (
	"time"

	"github.com/ozanturksever/go-cluster/internal/driver"
	"github.com/ozanturksever/go-cluster/internal/election"
	"github.com/ozanturksever/go-cluster/internal/fenced"
)

// RenewalOutcome classifies one lease renewal, for metrics.
type RenewalOutcome string

// Renewal outcomes.
const (
	RenewalOK       RenewalOutcome = driver.RenewalOK       // the CAS succeeded
	RenewalConflict RenewalOutcome = driver.RenewalConflict // the revision had moved on
	RenewalTimeout  RenewalOutcome = driver.RenewalTimeout  // no answer in RequestTimeout: outcome unknown
	RenewalError    RenewalOutcome = driver.RenewalError    // any other failure
)

// ElectionCause says why the lease was free when a node won it.
type ElectionCause string

// Election causes.
const (
	ElectionCreated  ElectionCause = ElectionCause(election.CauseCreated)  // the key did not exist
	ElectionReleased ElectionCause = ElectionCause(election.CauseReleased) // StepDown or Stop released it
	ElectionExpired  ElectionCause = ElectionCause(election.CauseExpired)  // the holder stopped renewing (or the value was garbage)
)

// Metrics receives the events a metrics system needs (see package
// metrics for a Prometheus collector). Its methods are called on the
// node's own goroutines, some on the election loop itself, so they must
// return quickly, must not block, and must not call the Node. The core
// stays free of any metrics library.
type Metrics interface {
	// ObserveRenewal reports a renewal by the leader and how long it took.
	ObserveRenewal(outcome RenewalOutcome, latency time.Duration)
	// ObserveLeadership reports that this node became (true) or stopped
	// being (false) the leader, with the tenure's epoch.
	ObserveLeadership(leader bool, epoch int64)
	// ObserveElection reports that this node won the lease: why it was
	// free, and how long the cluster went without a live tenure as this
	// node saw it. For ElectionReleased, the time since it saw the release;
	// for ElectionExpired, the time since the holder's last renewal reached
	// it (LeaseTTL plus the time to win: the failover time after a crash);
	// for ElectionCreated, 0.
	ObserveElection(cause ElectionCause, wait time.Duration)
	// ObserveLeader reports the leader as this node now sees it ("" when nobody leads).
	ObserveLeader(nodeID string)
	// ObserveHook reports one hook call, its duration and its error (a panic is an error).
	ObserveHook(hook string, duration time.Duration, err error)
	// ObserveFencing reports a ValidateLeadership call; err is nil when tenure was proven.
	ObserveFencing(err error)
}

// StateWriteOutcome classifies one fenced state write (State.Put, Delete
// or Commit), for metrics. A Metrics that also has the method
// ObserveStateWrite(outcome StateWriteOutcome) is told the outcome of
// every state write that was tried, on the writer's goroutine; like the
// Metrics methods it must return quickly and not call the Node. Writes
// refused before they are tried (an invalid key, a node not started or
// stopped) are not reported. The method is not part of Metrics, so that
// existing implementations keep compiling; package metrics' Collector has
// it.
type StateWriteOutcome string

// State write outcomes.
const (
	StateWriteOK        StateWriteOutcome = fenced.OutcomeOK        // the server stored it
	StateWriteFenced    StateWriteOutcome = fenced.OutcomeFenced    // the server refused it: the lease had moved (ErrFenced)
	StateWriteNotLeader StateWriteOutcome = fenced.OutcomeNotLeader // refused locally: this node's tenure had ended (ErrNotLeader)
	StateWriteConflict  StateWriteOutcome = fenced.OutcomeConflict  // a Commit's Expect did not hold (ErrStateConflict)
	StateWriteUncertain StateWriteOutcome = fenced.OutcomeUncertain // refused by a server behind the stream; it may have landed (ErrWriteUncertain)
	StateWriteError     StateWriteOutcome = fenced.OutcomeError     // any other failure (a timeout: it may have landed)
)

// stateMetrics is the optional extension of Metrics that StateWriteOutcome
// describes.
type stateMetrics interface {
	ObserveStateWrite(outcome StateWriteOutcome)
}

// observeStateWrite reports a fenced write's outcome when m takes it.
func observeStateWrite(m Metrics, outcome string) {
	if sm, ok := m.(stateMetrics); ok {
		sm.ObserveStateWrite(StateWriteOutcome(outcome))
	}
}

// noMetrics is the Metrics used when Config.Metrics is nil.
type noMetrics struct{}

func (noMetrics) ObserveRenewal(RenewalOutcome, time.Duration) {}
func (noMetrics) ObserveLeadership(bool, int64)                {}
func (noMetrics) ObserveElection(ElectionCause, time.Duration) {}
func (noMetrics) ObserveLeader(string)                         {}
func (noMetrics) ObserveHook(string, time.Duration, error)     {}
func (noMetrics) ObserveFencing(error)                         {}

// driverMetrics is m as the driver takes it: causes and outcomes as strings.
type driverMetrics struct{ Metrics }

func (m driverMetrics) ObserveRenewal(outcome string, latency time.Duration) {
	m.Metrics.ObserveRenewal(RenewalOutcome(outcome), latency)
}

func (m driverMetrics) ObserveElection(cause string, wait time.Duration) {
	m.Metrics.ObserveElection(ElectionCause(cause), wait)
}
