package election

import "time"

// Params are what the machine reads of a node's configuration, with
// defaults applied. LeaseTTL, RenewInterval and SafetyMargin are the
// node's own; a tenure uses the bucket's TTL (I2) and scales the other
// two to it (renewEvery, deadlineOf).
type Params struct {
	NodeID   string
	Instance string // names this process in its held records; empty: made from the seed
	Observer bool   // follows the lease and never campaigns

	LeaseTTL       time.Duration
	RenewInterval  time.Duration
	SafetyMargin   time.Duration
	RequestTimeout time.Duration
	DrainTimeout   time.Duration
	Cooldown       time.Duration

	Priority     int
	PreemptDelay time.Duration
	Metadata     map[string]string

	// ReadinessCheck: campaign only once a Readiness event says so.
	ReadinessCheck bool

	Knobs Knobs // the simulator's negative controls only; zero: the protocol
}

// Incarnation is what a Confirm (a stream-info request) tells of the
// bucket: its identity (Created and EpochBase), its metadata (0 where
// absent) and its last sequence.
type Incarnation struct {
	Created   time.Time     // the stream's creation time on the server that created it
	EpochBase int64         // go-cluster.epoch_base (µs), set by go-cluster init --rebase after a restore
	Protocol  int           // go-cluster.protocol
	LeaseTTL  time.Duration // go-cluster.lease_ttl
	MaxTTL    time.Duration // go-cluster.lease_ttl_max
	LastSeq   uint64        // the stream's last sequence
	Age       time.Duration // the server's time less Created, from the same reply
}

// Same says two readings name one incarnation.
func (i Incarnation) Same(o Incarnation) bool {
	return i.Created.Equal(o.Created) && i.EpochBase == o.EpochBase
}

// base is the epoch every record of the incarnation is above (I1).
func (i Incarnation) base() int64 {
	return max(i.Created.UnixMicro()-1, i.EpochBase, 0)
}
