package election

import "time"

// Params are what the machine reads of a node's configuration, with the
// defaults already applied (cluster.Config.withDefaults): nothing that
// does I/O, so that the machine cannot reach the connection, the log or
// the hooks.
type Params struct {
	NodeID string
	// Instance names this process in the held records it writes (rule
	// 48); empty: one made from the machine's seed.
	Instance string
	// Observer: the node follows the lease and never campaigns
	// (cluster.NewObserver).
	Observer       bool
	LeaseTTL       time.Duration
	RenewInterval  time.Duration
	SafetyMargin   time.Duration
	RequestTimeout time.Duration
	DrainTimeout   time.Duration
	Cooldown       time.Duration
	Priority       int
	// PreemptDelay is how long a follower of higher Priority waits,
	// once connected, synced and ready, before its first request that
	// a holder of lower priority hand over: at least LeaseTTL, so a
	// shorter one (zero included) waits LeaseTTL. Later requests stay
	// LeaseTTL apart (§4.6).
	PreemptDelay time.Duration
	// Metadata is what the node publishes while it leads; SetMetadata
	// replaces it.
	Metadata map[string]string
	// ReadinessCheck: the node has a Config.ReadinessCheck, so it
	// campaigns only once a check has passed, and until
	// ReadinessThreshold fail in a row.
	ReadinessCheck     bool
	ReadinessThreshold int
}

// BucketFacts are what the node learned of the bucket when it opened it.
type BucketFacts struct {
	LastSeqAtOpen uint64        // at least the revision of every entry written before
	AgeAtOpen     time.Duration // on the server's clock; zero when unknown
	// Created is when the bucket's stream was created, on the clock of
	// the server that created it; zero when unknown. Its microseconds are
	// the bucket's first epoch (rule 50).
	Created time.Time
	// Reconnects is the connection's reconnect count then: not a
	// reconnect this node has to account for.
	Reconnects uint64
}

// MinLeaseTTL is cluster.MinLeaseTTL: the span a released record nobody
// handed back is read back over (rule 26).
const MinLeaseTTL = 500 * time.Millisecond
