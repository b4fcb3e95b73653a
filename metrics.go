package cluster

import (
	"time"
)

// Metrics receives the events a metrics system needs (see package
// metrics for a Prometheus collector). Its methods are called on the
// node's own goroutines, some on the election loop itself, so they must
// return quickly, must not block, and must not call the Node. The core
// stays free of any metrics library; causes and outcomes are strings, the
// label values package metrics records.
//
// A Metrics that also has the method ObserveStateWrite(outcome string) is
// told how every fenced state write (State.Put, Delete, Commit) that was
// tried ended, on the writer's goroutine: "ok" (stored), "fenced" (the
// server refused it: the lease had moved, ErrFenced), "not_leader"
// (refused locally: the tenure had ended), "conflict" (a Commit's Expect
// did not hold), "uncertain" (refused by a server behind the stream: it
// may have landed, ErrWriteUncertain) or "error" (any other failure; a
// timeout may have landed). Writes refused before they are tried (an
// invalid key, a node not started or stopped) are not reported. The
// method is optional so that implementations without it keep compiling;
// package metrics' Collector has it.
type Metrics interface {
	// ObserveRenewal reports a renewal by the leader and how long it
	// took; outcome is "ok" (the CAS succeeded), "conflict" (the revision
	// had moved on), "timeout" (no answer in RequestTimeout: outcome
	// unknown; or, on a replicated bucket, refused uncompared all that
	// time because another write on the lease was in flight: not stored)
	// or "error".
	ObserveRenewal(outcome string, latency time.Duration)
	// ObserveLeadership reports that this node became (true) or stopped
	// being (false) the leader, with the tenure's epoch.
	ObserveLeadership(leader bool, epoch int64)
	// ObserveElection reports that this node won the lease: why it was
	// free, and how long the cluster went without a live tenure as this
	// node saw it. For "released" (StepDown or Stop released it), the time
	// since it saw the release; for "expired" (the holder stopped
	// renewing, or the value was garbage), the time since the holder's
	// last renewal reached it (LeaseTTL plus the time to win: the failover
	// time after a crash); for "created" (the key did not exist), 0.
	ObserveElection(cause string, wait time.Duration)
	// ObserveLeader reports the leader as this node now sees it ("" when nobody leads).
	ObserveLeader(nodeID string)
	// ObserveHook reports one hook call, its duration and its error (a panic is an error).
	ObserveHook(hook string, duration time.Duration, err error)
	// ObserveFencing reports a ValidateLeadership call; err is nil when tenure was proven.
	ObserveFencing(err error)
}

// stateMetrics is the optional extension of Metrics that Metrics
// describes.
type stateMetrics interface {
	ObserveStateWrite(outcome string)
}

// observeStateWrite reports a fenced write's outcome when m takes it.
func observeStateWrite(m Metrics, outcome string) {
	if sm, ok := m.(stateMetrics); ok {
		sm.ObserveStateWrite(outcome)
	}
}

// noMetrics is the Metrics used when Config.Metrics is nil.
type noMetrics struct{}

func (noMetrics) ObserveRenewal(string, time.Duration)     {}
func (noMetrics) ObserveLeadership(bool, int64)            {}
func (noMetrics) ObserveElection(string, time.Duration)    {}
func (noMetrics) ObserveLeader(string)                     {}
func (noMetrics) ObserveHook(string, time.Duration, error) {}
func (noMetrics) ObserveFencing(error)                     {}
