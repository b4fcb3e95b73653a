package cluster

import (
	"time"

	"github.com/ozanturksever/go-cluster/state"
)

// Metrics receives the events a metrics system needs (see package
// metrics for a Prometheus collector). Its methods are called on the
// node's own goroutines, some on the election loop itself, so they must
// return quickly, must not block, and must not call the Node. The core
// stays free of any metrics library.
//
// A Metrics that also has the method
// ObserveStateWrite(outcome state.WriteOutcome) is told how every fenced
// state write (package state) that was tried ended. The method is
// optional so that implementations without it keep compiling; package
// metrics' Collector has it.
type Metrics interface {
	// ObserveRenewal reports a renewal by the leader and how long it
	// took.
	ObserveRenewal(outcome RenewalOutcome, latency time.Duration)
	// ObserveLeadership reports that this node became (true) or stopped
	// being (false) the leader, with the tenure's epoch.
	ObserveLeadership(leader bool, epoch int64)
	// ObserveElection reports that this node won the lease: why it was
	// free, and how long the cluster went without a live tenure as this
	// node saw it. For ElectionReleased, the time since it saw the
	// release; for ElectionExpired, the time since the holder's last
	// renewal reached it (LeaseTTL plus the time to win: the failover
	// time after a crash); for ElectionCreated, 0.
	ObserveElection(cause ElectionCause, wait time.Duration)
	// ObserveLeader reports the leader as this node now sees it ("" when nobody leads).
	ObserveLeader(nodeID string)
	// ObserveHook reports one hook call, its duration and its error (a panic is an error).
	ObserveHook(hook string, duration time.Duration, err error)
	// ObserveFencing reports a ValidateLeadership call; err is nil when tenure was proven.
	ObserveFencing(err error)
}

// RenewalOutcome classifies one lease renewal, for metrics.
type RenewalOutcome string

// The outcomes of a renewal.
const (
	RenewalOK       RenewalOutcome = "ok"       // the CAS succeeded
	RenewalConflict RenewalOutcome = "conflict" // the revision had moved on
	// RenewalTimeout: no answer in RequestTimeout, so the outcome is
	// unknown; or, on a replicated bucket, refused uncompared all that
	// time because another write on the lease was in flight (not stored).
	RenewalTimeout RenewalOutcome = "timeout"
	RenewalError   RenewalOutcome = "error" // any other failure
)

// ElectionCause says why the lease was free when a node won it.
type ElectionCause string

// The causes of an election won.
const (
	ElectionCreated  ElectionCause = "created"  // the key did not exist
	ElectionReleased ElectionCause = "released" // StepDown or Stop released it
	ElectionExpired  ElectionCause = "expired"  // the holder stopped renewing (or the value was garbage)
)

// stateMetrics is the optional extension of Metrics that Metrics
// describes.
type stateMetrics interface {
	ObserveStateWrite(outcome state.WriteOutcome)
}

// engineMetrics is a Metrics as the engine reports to it: outcomes and
// causes as strings, the optional state writes always taken.
type engineMetrics struct{ Metrics }

func (m engineMetrics) ObserveRenewal(outcome string, latency time.Duration) {
	m.Metrics.ObserveRenewal(RenewalOutcome(outcome), latency)
}

func (m engineMetrics) ObserveElection(cause string, wait time.Duration) {
	m.Metrics.ObserveElection(ElectionCause(cause), wait)
}

func (m engineMetrics) ObserveStateWrite(outcome string) {
	if sm, ok := m.Metrics.(stateMetrics); ok {
		sm.ObserveStateWrite(state.WriteOutcome(outcome))
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
