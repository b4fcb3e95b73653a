package wire

import (
	"encoding/json"
	"fmt"
	"time"
)

// Member records: each node announces itself at Start and withdraws at
// Stop, so that tools list the members of a cluster, including those that
// crashed (announced, never withdrawn, not answering). The records live in
// the account's bucket, AccountBucketName, under AccountMemberKey; those of
// a cluster of protocol 3 in a bucket of their own, MembersBucketName,
// under MemberKey.

// Kinds of member (MemberRecord.Kind).
const (
	MemberCampaigning = "campaigning" // made by cluster.NewNode: may lead (observers announce nothing)
)

// MemberRecord is the value of a member key: a node's announcement,
// written once at Start. At Stop the node deletes the key (a KV delete
// marker): a key present with a record names a node that started and did
// not stop, running or crashed. Whether it runs, its status request tells
// (StatusSubject).
type MemberRecord struct {
	NodeID string `json:"node_id"`
	// Kind is MemberCampaigning.
	Kind string `json:"kind"`
	// Metadata is the node's Config.Metadata.
	Metadata map[string]string `json:"metadata,omitempty"`
	// StartedAt is when the node started, by its own wall clock.
	StartedAt time.Time `json:"started_at"`
	// Protocols are the lowest and highest protocol versions the node
	// speaks (docs/design.md §5.9); none: Protocol only.
	Protocols []int `json:"protocols,omitempty"`
}

// Speaks is the highest protocol version the member speaks.
func (r MemberRecord) Speaks() int {
	if len(r.Protocols) == 0 {
		return Protocol
	}
	return r.Protocols[len(r.Protocols)-1]
}

// DecodeMemberRecord parses the value of a member key; the error wraps
// ErrInvalidConfig when it is not a record with a valid NodeID.
func DecodeMemberRecord(data []byte) (MemberRecord, error) {
	var r MemberRecord
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("%w: member record: %w", ErrInvalidConfig, err)
	}
	if err := CheckNodeID("member record node_id", r.NodeID); err != nil {
		return r, err
	}
	return r, nil
}
