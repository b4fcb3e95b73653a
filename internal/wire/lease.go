package wire

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Protocol is the lowest version of the election protocol this go-cluster
// speaks: the bucket metadata go-cluster.protocol of the buckets it
// creates. It speaks every version up to ProtocolHi; a cluster runs the
// "v" of its lease record (docs/design.md §5.9, P16).
const Protocol = 3

// Lease is the lease record stored under the key "lease": the same
// fields and JSON as cluster.Lease (which converts to and from it),
// without the wall-clock helpers the election never uses.
type Lease struct {
	NodeID     string            `json:"node_id"`
	Epoch      int64             `json:"epoch"`
	ExpiresAt  time.Time         `json:"expires_at"`
	AcquiredAt time.Time         `json:"acquired_at"`
	TTLMillis  int64             `json:"ttl_ms,omitempty"`
	Priority   int               `json:"priority,omitempty"`
	Next       string            `json:"next,omitempty"`
	Metadata   map[string]string `json:"metadata,omitempty"`
	Instance   string            `json:"instance,omitempty"`
	Version    int               `json:"v,omitempty"`
	Revision   uint64            `json:"-"`
}

// IsReleased reports whether nobody holds the lease.
func (l *Lease) IsReleased() bool { return l.NodeID == "" }

// MaxLeaseSize is the largest lease value decoded; a larger one counts as
// garbage.
const MaxLeaseSize = 4096

// The bounds and defaults of a cluster's LeaseTTL and of the renewal
// (cluster.Config documents them in words).
const (
	// DefaultLeaseTTL is the LeaseTTL of a Config, or a new bucket, that
	// sets none.
	DefaultLeaseTTL = 10 * time.Second
	// DefaultRenewInterval is the RenewInterval of a Config that sets none
	// (at most a quarter of its LeaseTTL).
	DefaultRenewInterval = 3 * time.Second
	// MinLeaseTTL is the shortest LeaseTTL accepted.
	MinLeaseTTL = 500 * time.Millisecond
	// MaxLeaseTTL is the longest LeaseTTL accepted, and the longest ttl_ms a
	// lease record may carry: one limit for writers and readers, so that no
	// node writes a record that the others would read as garbage.
	MaxLeaseTTL = 24 * time.Hour
)

// DecodeLease parses a stored lease value. Anything that is not a lease
// record (wrong JSON, negative epoch, oversized) is an error wrapping
// ErrInvalidLease: the caller treats it as held by an unknown holder.
// revision is the KV revision, kept in Lease.Revision.
func DecodeLease(data []byte, revision uint64) (Lease, error) {
	if len(data) > MaxLeaseSize {
		return Lease{}, fmt.Errorf("%w: %d bytes, at most %d", ErrInvalidLease, len(data), MaxLeaseSize)
	}
	if t := trimSpace(data); len(t) == 0 || t[0] != '{' {
		return Lease{}, fmt.Errorf("%w: not a JSON object", ErrInvalidLease)
	}
	var l Lease
	if err := json.Unmarshal(data, &l); err != nil {
		return Lease{}, fmt.Errorf("%w: %w", ErrInvalidLease, err)
	}
	if err := l.checkRanges(); err != nil {
		return Lease{}, fmt.Errorf("%w: %w", ErrInvalidLease, err)
	}
	if err := l.checkNames(); err != nil {
		return Lease{}, fmt.Errorf("%w: %w", ErrInvalidLease, err)
	}
	l.Revision = revision
	return l, nil
}

// checkRanges checks a decoded record's numbers and times.
func (l *Lease) checkRanges() error {
	if l.TTLMillis < 0 || l.TTLMillis > MaxLeaseTTL.Milliseconds() {
		return fmt.Errorf("ttl_ms %d out of range", l.TTLMillis)
	}
	// A release writes acquired_at back; JSON can only hold years 0-9999.
	for _, at := range []time.Time{l.AcquiredAt, l.ExpiresAt} {
		if y := at.UTC().Year(); y < 0 || y > 9999 {
			return fmt.Errorf("time %v out of range", at)
		}
	}
	if l.Priority < 0 {
		return fmt.Errorf("negative priority %d", l.Priority)
	}
	if l.Epoch < 0 {
		return fmt.Errorf("negative epoch %d", l.Epoch)
	}
	if l.Epoch == 0 {
		// Every record this library writes, released ones too, carries the
		// epoch of a tenure: {} or null is not a release.
		return errors.New("epoch 0")
	}
	return nil
}

// checkNames checks a decoded record's node names.
func (l *Lease) checkNames() error {
	if l.Next != "" {
		if err := CheckNodeID("next", l.Next); err != nil {
			return errors.New(err.Error()) // a bad record, not a bad Config
		}
	}
	if l.NodeID != "" {
		if err := CheckNodeID("node_id", l.NodeID); err != nil {
			return errors.New(err.Error())
		}
	}
	if l.Instance != "" {
		if err := CheckIdentifier("instance", l.Instance); err != nil {
			return errors.New(err.Error())
		}
	}
	return nil
}

// Encode is l as stored under the lease key, its Version Protocol if 0. It
// panics on a record JSON cannot hold (a time outside years 0-9999):
// the records written are made of times DecodeLease accepted and now.
func (l Lease) Encode() []byte {
	l.Version = cmp.Or(l.Version, Protocol)
	data, err := json.Marshal(l)
	if err != nil {
		panic(fmt.Sprintf("encode lease: %v", err))
	}
	return data
}

// ReleasedRecord is the released record of protocol version (0:
// Protocol) that ends a tenure at epoch,
// acquired at acquired and released at at: no holder, next the node
// handed over to (empty: none). go-cluster init --upgrade writes one with
// acquired and at both now (docs/design.md §5.9): over a bucket whose old
// nodes are all stopped, it lets the first new node lead at once (P5)
// when epoch is in the incarnation's range (P1).
func ReleasedRecord(version int, epoch int64, acquired, at time.Time, next string) []byte {
	return Lease{Version: version, Epoch: epoch, AcquiredAt: acquired.UTC(), ExpiresAt: at.UTC(), Next: next}.Encode()
}

// trimSpace drops JSON's whitespace around b.
func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\n' || b[0] == '\r' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}
