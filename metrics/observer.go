package metrics

import (
	"context"
	"errors"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/state"
)

// The cluster.Metrics methods are called by the node, some on its election loop:
// each only updates in-memory series (an atomic add after a read-locked
// lookup of the label values), with no I/O.
var (
	_ cluster.Metrics = (*Collector)(nil)
	// The optional method that gets state write outcomes (cluster.Metrics).
	_ interface {
		ObserveStateWrite(state.WriteOutcome)
	} = (*Collector)(nil)
)

// ObserveRenewal counts a renewal by outcome and records its latency.
func (c *Collector) ObserveRenewal(outcome cluster.RenewalOutcome, latency time.Duration) {
	c.renewals.WithLabelValues(string(outcome)).Inc()
	c.renewalLatency.Observe(latency.Seconds())
}

// ObserveLeadership counts a transition of this node to or from leadership.
func (c *Collector) ObserveLeadership(leader bool, epoch int64) {
	c.leading.Store(leader)
	c.epoch.Store(epoch)
	if leader {
		c.acquired.Inc()
		c.leaderKnown.Store(true)
	} else {
		c.lost.Inc()
	}
}

// ObserveElection records how long the cluster had no live tenure, as the
// winner saw it, by cause. The first election of a new key
// (cause "created") measures nothing and is not recorded.
func (c *Collector) ObserveElection(cause cluster.ElectionCause, wait time.Duration) {
	if cause == cluster.ElectionCreated {
		return
	}
	c.electionWait.WithLabelValues(string(cause)).Observe(wait.Seconds())
}

// ObserveLeader counts a change of the leader this node knows.
func (c *Collector) ObserveLeader(nodeID string) {
	c.leaderKnown.Store(nodeID != "")
	c.leaderChanges.Inc()
}

// ObserveHook records a hook call's duration, and counts it if it failed.
func (c *Collector) ObserveHook(hook string, duration time.Duration, err error) {
	c.hookDuration.WithLabelValues(hook).Observe(duration.Seconds())
	if err != nil {
		c.hookErrors.WithLabelValues(hook).Inc()
	}
}

// ObserveFencing counts a ValidateLeadership call by result.
func (c *Collector) ObserveFencing(err error) {
	c.fencing.WithLabelValues(FencingResult(err)).Inc()
}

// ObserveStateWrite counts a fenced state write by outcome: the optional
// method of a cluster.Metrics.
func (c *Collector) ObserveStateWrite(outcome state.WriteOutcome) {
	c.stateWrites.WithLabelValues(string(outcome)).Inc()
}

// FencingResult maps the error of cluster.Node.ValidateLeadership to the
// value of LabelResult it is counted under.
func FencingResult(err error) string {
	switch {
	case err == nil:
		return FencingOK
	case errors.Is(err, cluster.ErrNotLeader):
		return FencingNotLeader
	case errors.Is(err, cluster.ErrLeaseExpired):
		return FencingLeaseExpired
	case errors.Is(err, cluster.ErrEpochMismatch):
		return FencingEpochMismatch
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return FencingCanceled
	default:
		return FencingError
	}
}
