package cluster

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/ozanturksever/go-cluster/internal/wire"
)

// Lease is the record stored under the key "lease" of the cluster's bucket.
//
// ExpiresAt and AcquiredAt are written from the writer's wall clock for
// people and tools to read; the election never compares them with another
// machine's clock. A Lease with an empty NodeID is released: nobody holds
// it, and Epoch keeps the last holder's epoch so that epochs never go back.
type Lease struct {
	NodeID     string    `json:"node_id"`     // node holding the lease; empty when released
	Epoch      int64     `json:"epoch"`       // fencing token: grows by one per acquisition from the bucket's creation time in µs
	ExpiresAt  time.Time `json:"expires_at"`  // writer's wall-clock estimate of expiry
	AcquiredAt time.Time `json:"acquired_at"` // writer's wall-clock time of acquisition
	// TTLMillis is the tenure's LeaseTTL in milliseconds: the bucket's
	// when the holder acquired (docs/design.md, I2), fixed for the whole
	// tenure. Followers wait it out from when they first saw the record.
	// At most 24h.
	TTLMillis int64 `json:"ttl_ms,omitempty"`
	// Priority is the holder's Config.Priority.
	Priority int `json:"priority,omitempty"`
	// Next, on a released lease, names the node the last holder handed over
	// to: for a short while only that node campaigns.
	Next string `json:"next,omitempty"`
	// Metadata is the holder's Config.Metadata (its advertised address,
	// say), published with the lease so that every node, observer and KV
	// client can find where to send writes. Omitted when empty, and on a
	// released record.
	Metadata map[string]string `json:"metadata,omitempty"`
	// Instance names the process that wrote a held record: random, made
	// once per Node. Two processes given the same NodeID (a copied
	// config, a container restarted beside its old self) write different
	// instances, so neither ever takes the other's record for its own
	// late write (docs/design.md, P9). Records written before it
	// existed carry none. Letters, digits, '-' and '_', at most 64 bytes.
	Instance string `json:"instance,omitempty"`
	// Version is the protocol version the cluster runs: a node reads and
	// writes only records of the versions it speaks, and a cluster moves
	// to a new one once every member speaks it (docs/production.md,
	// "Moving to a new version").
	Version  int    `json:"v,omitempty"`
	Revision uint64 `json:"-"` // NATS KV revision (not serialized)
}

// IsExpired reports whether ExpiresAt has passed on this machine's wall
// clock. Informational only: it trusts the writer's clock, and the
// election never uses it. Who leads is what Node.IsLeader (on the leader)
// and Node.Leader or OnLeaderChange (elsewhere) say, judged on each node's
// monotonic clock.
func (l *Lease) IsExpired() bool { return !time.Now().Before(l.ExpiresAt) }

// IsValid reports whether the lease names a holder and has not expired by
// this machine's wall clock. Informational only, like IsExpired: use
// Node.IsLeader, Node.Leader or Node.ValidateLeadership to decide.
func (l *Lease) IsValid() bool { return l.NodeID != "" && !l.IsExpired() }

// TimeUntilExpiry is the time left until ExpiresAt, or 0 if it has passed,
// by this machine's wall clock. Informational only, like IsExpired.
func (l *Lease) TimeUntilExpiry() time.Duration {
	if d := time.Until(l.ExpiresAt); d > 0 {
		return d
	}
	return 0
}

// encodeLease renders l as the JSON stored in KV.
func encodeLease(l Lease) ([]byte, error) {
	return json.Marshal(l)
}

// decodeLease parses a stored lease value with the election's rules
// (wire.DecodeLease): anything that is not a lease record (wrong
// JSON, negative epoch, oversized) is an error, and the caller treats it
// as held by an unknown holder.
func decodeLease(data []byte, revision uint64) (Lease, error) {
	l, err := wire.DecodeLease(data, revision)
	return Lease(l), err
}

// mustEncode encodes a record this node made, which always encodes.
func mustEncode(l Lease) []byte {
	data, err := encodeLease(l)
	if err != nil {
		panic(fmt.Sprintf("encode lease: %v", err))
	}
	return data
}
