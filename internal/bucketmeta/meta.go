// Package bucketmeta is the election bucket's metadata
// (docs/design.md, I2 and the incarnation's identity): the cluster's
// LeaseTTL, the ceiling any holder may still use, the protocol version and
// the epoch base set after a restore. meta.go reads and writes the keys
// with the standard library only: the store parses them from a
// stream-info reply. live.go and upgrade.go change a live bucket through
// nats.go's jetstream, for go-cluster init: its TTL (SetLeaseTTL), its
// identity after a restore (Rebase), and its move from protocol 1
// (Upgrade).
package bucketmeta

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// The metadata keys of an election bucket's stream.
const (
	KeyLeaseTTL    = "go-cluster.lease_ttl"     // what an acquisition uses, in ms
	KeyLeaseTTLMax = "go-cluster.lease_ttl_max" // the longest TTL a holder of this incarnation may use, in ms
	KeyProtocol    = "go-cluster.protocol"      // the bucket's mark: 3, or 4 with the cluster's ceiling in the account's bucket (wire.BucketProtocol)
	KeyEpochBase   = "go-cluster.epoch_base"    // µs since 1970; set by init --rebase
)

// ErrInvalid says a metadata value does not parse.
var ErrInvalid = errors.New("invalid bucket metadata")

// Meta is what the metadata says; a zero field: the key is absent.
type Meta struct {
	LeaseTTL  time.Duration
	MaxTTL    time.Duration
	Protocol  int
	EpochBase int64
}

// Parse reads m. A value that does not parse is an error naming its key:
// the bucket then has no TTL a node could trust.
func Parse(m map[string]string) (Meta, error) {
	var out Meta
	var errs []error
	ms := func(key string, into *time.Duration) {
		v, ok := m[key]
		if !ok {
			return
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 || n > (24*time.Hour).Milliseconds() {
			errs = append(errs, fmt.Errorf("%w: %s %q is not a number of milliseconds in (0, 24h]", ErrInvalid, key, v))
			return
		}
		*into = time.Duration(n) * time.Millisecond
	}
	ms(KeyLeaseTTL, &out.LeaseTTL)
	ms(KeyLeaseTTLMax, &out.MaxTTL)
	if v, ok := m[KeyProtocol]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			errs = append(errs, fmt.Errorf("%w: %s %q is not a protocol version", ErrInvalid, KeyProtocol, v))
		}
		out.Protocol = n
	}
	if v, ok := m[KeyEpochBase]; ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			errs = append(errs, fmt.Errorf("%w: %s %q is not a number of microseconds", ErrInvalid, KeyEpochBase, v))
		}
		out.EpochBase = n
	}
	if out.MaxTTL != 0 && out.LeaseTTL > out.MaxTTL {
		errs = append(errs, fmt.Errorf("%w: %s %v is above %s %v", ErrInvalid, KeyLeaseTTL, out.LeaseTTL, KeyLeaseTTLMax, out.MaxTTL))
	}
	return out, errors.Join(errs...)
}

// Set writes meta's non-zero fields into m (the stream's own metadata,
// which the server also writes into, is kept) and returns it.
func (meta Meta) Set(m map[string]string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	if meta.LeaseTTL > 0 {
		m[KeyLeaseTTL] = strconv.FormatInt(meta.LeaseTTL.Milliseconds(), 10)
	}
	if meta.MaxTTL > 0 {
		m[KeyLeaseTTLMax] = strconv.FormatInt(meta.MaxTTL.Milliseconds(), 10)
	}
	if meta.Protocol > 0 {
		m[KeyProtocol] = strconv.Itoa(meta.Protocol)
	}
	if meta.EpochBase > 0 {
		m[KeyEpochBase] = strconv.FormatInt(meta.EpochBase, 10)
	}
	return m
}

// ForNewBucket is the metadata of a bucket created for a cluster whose
// LeaseTTL is ttl, by protocol version protocol.
func ForNewBucket(ttl time.Duration, protocol int) map[string]string {
	return Meta{LeaseTTL: ttl, MaxTTL: ttl, Protocol: protocol}.Set(nil)
}
