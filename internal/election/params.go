package election

import (
	"cmp"
	"math"
	"time"

	"github.com/ozanturksever/go-cluster/internal/wire"
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
	// ProtocolHi is the highest protocol version this node speaks (P16),
	// from wire.Protocol up; 0: wire.ProtocolHi.
	ProtocolHi int

	Knobs Knobs // the simulator's negative controls only; zero: the protocol
}

// Incarnation is what a Confirm (a stream-info request) tells of the
// bucket: its identity (Created, FirstSeq, EpochBase), its metadata (0
// where absent), its last sequence, and the cluster's ceiling (I2).
type Incarnation struct {
	Created       time.Time     // the stream's creation time on the server that created it
	FirstSeq      uint64        // the stream's first_seq: revisions name their incarnation (§2.1)
	EpochBase     int64         // go-cluster.epoch_base (µs), set by go-cluster init --rebase or --upgrade
	Protocol      int           // go-cluster.protocol
	LeaseTTL      time.Duration // go-cluster.lease_ttl
	MaxTTL        time.Duration // go-cluster.lease_ttl_max
	LastSeq       uint64        // the stream's last sequence
	Age           time.Duration // the server's time less Created, from the same reply
	ClusterMaxTTL time.Duration // the cluster's ceiling, kept apart from the bucket (§2.7); 0: unknown
	MembersSpeak  int           // the highest version every member record names (P16); 0: unknown
}

// Same says two readings name one incarnation.
func (i Incarnation) Same(o Incarnation) bool {
	return i.Created.Equal(o.Created) && i.FirstSeq == o.FirstSeq && i.EpochBase == o.EpochBase
}

// Usable says the bucket has the election's metadata and its revisions
// name their incarnation: a first_seq, or an epoch_base (§2.1).
func (i Incarnation) Usable() bool {
	return i.Protocol != 0 && i.LeaseTTL > 0 && (i.FirstSeq > 1 || i.EpochBase > 0)
}

// zero is the sequence before the incarnation's first.
func (i Incarnation) zero() uint64 { return max(i.FirstSeq, 1) - 1 }

// base is the epoch every record of the incarnation is above (I1).
func (i Incarnation) base() int64 {
	return max(int64(min(i.zero(), math.MaxInt64/2)), i.EpochBase, 0)
}

// index is a sequence's place in the incarnation, from 1; 0 below it.
func (i Incarnation) index(seq uint64) uint64 {
	if seq <= i.zero() {
		return 0
	}
	return seq - i.zero()
}

// hi is the highest protocol version the node speaks (P16).
func (p Params) hi() int { return cmp.Or(p.ProtocolHi, wire.ProtocolHi) }
