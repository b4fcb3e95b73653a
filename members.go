package cluster

// Member records: each node announces itself in the bucket at Start and
// withdraws at Stop, so that tools list the members of a cluster, including
// those that crashed (announced, never withdrawn, not answering). One KV
// write each way: nothing in steady state.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// MemberKeyPrefix starts the key of every member record: the members are
// the keys "member.*" of the bucket, listed with one filtered watch. State
// keys all start "state.", and "lease" and "cooldown-<token>" have no '.',
// so a member key never meets another key.
const MemberKeyPrefix = "member."

// MemberKey is the key of node nodeID's member record:
// "member.<NodeIDToken(nodeID)>" ("member.db1=example=com" for
// "db1.example.com"): exactly two tokens, since a token has no '.'. NATS
// permissions must let each node write its own.
func MemberKey(nodeID string) string { return MemberKeyPrefix + NodeIDToken(nodeID) }

// Kinds of member (MemberRecord.Kind).
const (
	MemberCampaigning = "campaigning" // made by NewNode: may lead
	MemberObserver    = "observer"    // made by NewObserver: never campaigns
)

// MemberRecord is the value of a member key: a node's announcement,
// written once at Start. At Stop the node deletes the key (a KV delete
// marker): a key present with a record names a node that started and did
// not stop, running or crashed. Whether it runs, its status request tells
// (StatusSubject).
type MemberRecord struct {
	NodeID string `json:"node_id"`
	// Kind is MemberCampaigning or MemberObserver.
	Kind string `json:"kind"`
	// Metadata is the node's Config.Metadata.
	Metadata map[string]string `json:"metadata,omitempty"`
	// StartedAt is when the node started, by its own wall clock.
	StartedAt time.Time `json:"started_at"`
}

// DecodeMemberRecord parses the value of a member key; the error wraps
// ErrInvalidConfig when it is not a record with a valid NodeID.
func DecodeMemberRecord(data []byte) (MemberRecord, error) {
	var r MemberRecord
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("%w: member record: %w", ErrInvalidConfig, err)
	}
	if err := ValidateNodeID("member record node_id", r.NodeID); err != nil {
		return r, err
	}
	return r, nil
}

// MemberKeys is the key filter of every member record: "member.*".
const MemberKeys = MemberKeyPrefix + "*"

// isMemberViolation says a permission violation is about a member key of
// bucket: the announcement is best effort, so it must not read as the
// election's own.
func isMemberViolation(msg, bucket string) bool {
	return strings.Contains(msg, kvSubject(bucket, MemberKeyPrefix))
}

// announce writes this node's member record. Best effort, bounded by
// RequestTimeout: a node whose permissions predate member keys still runs,
// and shows in `go-cluster status` only while it answers.
func (n *Node) announce(ctx context.Context, st *store, startedAt time.Time) {
	kind := MemberCampaigning
	if !n.campaign {
		kind = MemberObserver
	}
	data, _ := json.Marshal(MemberRecord{NodeID: n.cfg.NodeID, Kind: kind, Metadata: n.cfg.Metadata, StartedAt: startedAt.UTC()})
	ctx, cancel := context.WithTimeout(ctx, n.cfg.RequestTimeout)
	defer cancel()
	if _, err := st.kv.Put(ctx, MemberKey(n.cfg.NodeID), data); err != nil {
		n.log.Warn("could not announce this node: go-cluster status will not list it once it stops answering", "key", MemberKey(n.cfg.NodeID), "error", tidy(err))
	}
}

// withdraw deletes this node's member record, bounded by RequestTimeout.
func (n *Node) withdraw(st *store) {
	ctx, cancel := context.WithTimeout(context.Background(), n.cfg.RequestTimeout)
	defer cancel()
	if err := st.kv.Delete(ctx, MemberKey(n.cfg.NodeID)); err != nil {
		n.log.Warn("could not withdraw this node: go-cluster status will list it as down", "key", MemberKey(n.cfg.NodeID), "error", tidy(err))
	}
}
