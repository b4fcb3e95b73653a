package election

import (
	"math"
	"time"
)

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
// bucket: its identity (Created, FirstSeq and EpochBase), its metadata (0
// where absent), its last sequence, and the cluster's TTL ceiling kept
// with the members bucket, which a re-create of this one does not lose.
type Incarnation struct {
	Created   time.Time     // the stream's creation time on the server that created it
	FirstSeq  uint64        // the stream's first_seq: revisions name their incarnation (§2.1)
	EpochBase int64         // go-cluster.epoch_base (µs), set by go-cluster init --rebase or --upgrade
	Protocol  int           // go-cluster.protocol
	LeaseTTL  time.Duration // go-cluster.lease_ttl
	MaxTTL    time.Duration // go-cluster.lease_ttl_max
	LastSeq   uint64        // the stream's last sequence
	Age       time.Duration // the server's time less Created, from the same reply
	// ClusterMaxTTL is go-cluster.lease_ttl_max of the members bucket:
	// every tenure's TTL is at most it (I2); 0 where unknown.
	ClusterMaxTTL time.Duration
}

// Same says two readings name one incarnation.
func (i Incarnation) Same(o Incarnation) bool {
	return i.Created.Equal(o.Created) && i.FirstSeq == o.FirstSeq && i.EpochBase == o.EpochBase
}

// Usable says the bucket carries the election's metadata and names its
// revisions' incarnation: a first_seq, or an epoch_base above every
// earlier epoch (init --rebase, --upgrade). A bucket created again by a
// tool other than this library's has neither, and nothing of its TTL or
// its revisions may be trusted (§2.1).
func (i Incarnation) Usable() bool {
	return i.Protocol != 0 && i.LeaseTTL > 0 && (i.FirstSeq > 1 || i.EpochBase > 0)
}

// zero is the sequence before the incarnation's first: an empty stream's
// last sequence.
func (i Incarnation) zero() uint64 { return max(i.FirstSeq, 1) - 1 }

// base is the epoch every record of the incarnation is above (I1).
func (i Incarnation) base() int64 {
	return max(int64(min(i.zero(), math.MaxInt64/2)), i.EpochBase, 0)
}

// index is a sequence's place in the incarnation, from 1; 0 for one
// below it (another incarnation's).
func (i Incarnation) index(seq uint64) uint64 {
	if seq <= i.zero() {
		return 0
	}
	return seq - i.zero()
}
