package metrics

import (
	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/state"
)

// DefaultNamespace is the prefix of every metric name unless WithNamespace
// says otherwise: "gocluster_is_leader", "gocluster_epoch", ...
const DefaultNamespace = "gocluster"

// Metric names, without the namespace. The full name is
// "<namespace>_<name>", e.g. "gocluster_renewals_total".
const (
	NameIsLeader              = "is_leader"
	NameEpoch                 = "epoch"
	NameLeaderKnown           = "leader_known"
	NameLeadershipTransitions = "leadership_transitions_total"
	NameLeaderChanges         = "leader_changes_total"
	NameRenewals              = "renewals_total"
	NameRenewalDuration       = "renewal_duration_seconds"
	NameElectionWait          = "election_wait_seconds"
	NameHookDuration          = "hook_duration_seconds"
	NameHookErrors            = "hook_errors_total"
	NameFencingChecks         = "fencing_checks_total"
	NameStateWrites           = "state_writes_total"
	NameNATSConnected         = "nats_connected"
	NameNATSConnectionState   = "nats_connection_state"
	NameNATSReconnects        = "nats_reconnects_total"
)

// Label names. LabelCluster and LabelNode are constant labels on every
// series; the others vary.
const (
	LabelCluster    = "cluster"
	LabelNode       = "node"
	LabelTransition = "transition" // "acquired" or "lost"
	LabelOutcome    = "outcome"    // a renewal's ("ok", "conflict", "timeout", "error") or a state write's ("ok", "fenced", "not_leader", "conflict", "uncertain", "error"): see cluster.Metrics
	LabelHook       = "hook"       // "OnBecomeLeader", "OnLoseLeadership", "OnLeaderChange"
	LabelCause      = "cause"      // why the lease was free: "released" or "expired" (cluster.Metrics)
	LabelResult     = "result"     // a fencing result: see the Fencing constants
	LabelState      = "state"      // a NATS connection state: see ConnectionStates
)

// Values of LabelTransition.
const (
	TransitionAcquired = "acquired"
	TransitionLost     = "lost"
)

// Values of LabelResult on fencing_checks_total: how a
// cluster.Node.ValidateLeadership call ended.
const (
	FencingOK            = "ok"             // tenure proven
	FencingNotLeader     = "not_leader"     // cluster.ErrNotLeader
	FencingLeaseExpired  = "lease_expired"  // cluster.ErrLeaseExpired
	FencingEpochMismatch = "epoch_mismatch" // cluster.ErrEpochMismatch
	FencingCanceled      = "canceled"       // the caller's context ended first
	FencingError         = "error"          // anything else (node stopped, KV error, ...)
)

// The label values below get their series at start, so that rate() and
// alerts see a 0 before the first event. They are functions, not package
// variables: nothing here can be changed by another package.

// hookNames are the hooks the core reports.
func hookNames() []string { return []string{"OnBecomeLeader", "OnLoseLeadership", "OnLeaderChange"} }

// electionCauses are the causes recorded in election_wait_seconds.
func electionCauses() []string {
	return []string{string(cluster.ElectionReleased), string(cluster.ElectionExpired)}
}

// renewalOutcomes are the outcomes the core reports.
func renewalOutcomes() []string {
	return []string{string(cluster.RenewalOK), string(cluster.RenewalConflict), string(cluster.RenewalTimeout), string(cluster.RenewalError)}
}

// stateWriteOutcomes are the outcomes of fenced state writes.
func stateWriteOutcomes() []string {
	return []string{string(state.WriteOK), string(state.WriteFenced), string(state.WriteNotLeader),
		string(state.WriteConflict), string(state.WriteUncertain), string(state.WriteError)}
}

// fencingResults are the values of LabelResult.
func fencingResults() []string {
	return []string{FencingOK, FencingNotLeader, FencingLeaseExpired, FencingEpochMismatch, FencingCanceled, FencingError}
}

// ConnectionStates returns the values of LabelState on nats_connection_state:
// one series each, 1 for the connection's current state and 0 for the others.
func ConnectionStates() []string {
	return []string{"connecting", "connected", "reconnecting", "disconnected", "draining_subs", "draining_pubs", "closed"}
}

// Histogram buckets, in seconds.

// renewalBuckets span a KV round trip on loopback (sub-millisecond) to a
// renewal that ran into RequestTimeout (seconds).
func renewalBuckets() []float64 {
	return []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
}

// electionBuckets span a follower that reacts at once (microseconds: the
// wait starts when it sees the lease free) to one that waited for a
// successor named in a handover, a cooldown or a failed health check
// (seconds).
func electionBuckets() []float64 {
	return []float64{.00001, .000025, .0001, .00025, .001, .0025, .01, .025, .1, .25, 1, 2.5, 10, 30, 60}
}

// hookBuckets span a quick hook to a drain that used up DrainTimeout.
func hookBuckets() []float64 {
	return []float64{.0001, .001, .01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}
}
