package election

import "time"

// Params are what the machine reads of a node's configuration, with
// defaults applied. LeaseTTL, RenewInterval and SafetyMargin are the
// node's own; a tenure uses the bucket's TTL (I2) and scales the other
// two to it (tenureTimings).
type Params struct {
	NodeID string
	// Instance names this process in the held records it writes; empty:
	// one made from the machine's seed.
	Instance string
	// Observer: follows the lease and never campaigns.
	Observer bool

	LeaseTTL       time.Duration
	RenewInterval  time.Duration
	SafetyMargin   time.Duration
	RequestTimeout time.Duration
	DrainTimeout   time.Duration
	Cooldown       time.Duration

	Priority     int
	PreemptDelay time.Duration
	Metadata     map[string]string

	// ReadinessCheck: campaign only once a check has passed, and until
	// ReadinessThreshold fail in a row.
	ReadinessCheck     bool
	ReadinessThreshold int
}

// Incarnation is what a Confirm (a stream-info request) tells of the
// bucket: its identity, its metadata and its last sequence.
type Incarnation struct {
	// Created is the stream's creation time on the server that created
	// it; with EpochBase, the incarnation's identity.
	Created time.Time
	// EpochBase is the bucket metadata go-cluster.epoch_base (µs), set
	// by go-cluster init --rebase after a restore; 0 when absent.
	EpochBase int64
	// Protocol is the bucket metadata go-cluster.protocol; 0 when absent.
	Protocol int
	// LeaseTTL and MaxTTL are go-cluster.lease_ttl and
	// go-cluster.lease_ttl_max; 0 when absent.
	LeaseTTL time.Duration
	MaxTTL   time.Duration
	// LastSeq is the stream's last sequence.
	LastSeq uint64
	// Age is the server's time less Created, from the same reply.
	Age time.Duration
}

// same says two readings name one incarnation.
func (i Incarnation) same(o Incarnation) bool {
	return i.Created.Equal(o.Created) && i.EpochBase == o.EpochBase
}

// base is the epoch every record of the incarnation is above (I1).
func (i Incarnation) base() int64 {
	return max(i.Created.UnixMicro()-1, i.EpochBase, 0)
}
