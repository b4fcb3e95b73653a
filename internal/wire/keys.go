package wire

import (
	"fmt"
	"strings"
)

// The names the cluster's NATS objects go by: buckets, keys, the subjects
// nodes answer on, the subjects a KV client publishes to and the streams
// behind buckets.

// LeaseKey is the key of the lease record in the cluster's bucket.
const LeaseKey = "lease"

// BucketName is the KV bucket of a cluster: "cluster-<ClusterID>".
func BucketName(clusterID string) string { return "cluster-" + clusterID }

// MembersBucketName is the KV bucket of the member records and the TTL
// ceiling of a cluster whose bucket is marked protocol 3:
// "members-<ClusterID>". A cluster of protocol 4 keeps both in the
// account's bucket (AccountBucketName) and has no such bucket. No decision
// reads the records, and a node that cannot reach them elects all the
// same. (Not "cluster-<ClusterID>-members", the election bucket of the
// ClusterID "<ClusterID>-members".)
func MembersBucketName(clusterID string) string { return "members-" + clusterID }

// AccountBucketName is the one KV bucket that every cluster of a NATS
// account shares, for what must outlive its election bucket
// (docs/design.md §2.6, §2.7): each cluster's TTL ceiling (CeilingKey) and
// member records (AccountMemberKey). One stream for the account, whatever
// the number of clusters: a cluster of protocol 4 costs its election
// bucket's stream and nothing more.
const AccountBucketName = "go-cluster"

// CeilingKey is the key of cluster clusterID's TTL ceiling in the
// account's bucket: "ceiling.<ClusterID>", whose value is the ceiling in
// milliseconds, in decimal. A ClusterID has no '.': the key is two tokens.
func CeilingKey(clusterID string) string { return "ceiling." + clusterID }

// AccountMemberKey is the key of node nodeID's member record of cluster
// clusterID in the account's bucket:
// "members.<ClusterID>.<NodeIDToken(nodeID)>", exactly three tokens. NATS
// permissions must let each node write its own.
func AccountMemberKey(clusterID, nodeID string) string {
	return AccountMemberKeyPrefix(clusterID) + NodeIDToken(nodeID)
}

// AccountMemberKeyPrefix starts every member key of cluster clusterID in
// the account's bucket: "members.<ClusterID>.".
func AccountMemberKeyPrefix(clusterID string) string { return "members." + clusterID + "." }

// AccountMemberKeys is the key filter of every member record of cluster
// clusterID in the account's bucket: "members.<ClusterID>.*".
func AccountMemberKeys(clusterID string) string { return AccountMemberKeyPrefix(clusterID) + "*" }

// NodeIDTokenDot stands for '.' in a NodeIDToken: allowed in NATS subjects
// and KV keys, and never in a NodeID.
const NodeIDTokenDot = '='

// NodeIDToken is the form a NodeID takes in NATS subjects and KV keys:
// every '.' becomes '=' ("db1.example.com" -> "db1=example=com"), so that
// the NodeID is exactly one subject token (a dot would separate two) and
// makes a KV key with no dot ("cooldown-db1=example=com"). A NodeID without
// dots is its own token, so subjects and keys of such nodes are unchanged.
// Since '=' is not allowed in a NodeID, two NodeIDs never share a token,
// and NodeIDFromToken gives the NodeID back. nodeID should be valid
// (CheckNodeID); anything else is mapped the same way, unchecked.
func NodeIDToken(nodeID string) string {
	return strings.ReplaceAll(nodeID, ".", string(NodeIDTokenDot))
}

// NodeIDFromToken reverses NodeIDToken: it returns the NodeID whose token
// is token, for a tool that reads a subject or a key. A token that is not
// the token of a valid NodeID (a '.', a '=' at either end or doubled, a
// character no NodeID has) is refused with an error that wraps
// ErrInvalidConfig.
func NodeIDFromToken(token string) (string, error) {
	if strings.ContainsRune(token, '.') {
		return "", fmt.Errorf("%w: node token %q contains '.'", ErrInvalidConfig, token)
	}
	nodeID := strings.ReplaceAll(token, string(NodeIDTokenDot), ".")
	if err := CheckNodeID("node token", nodeID); err != nil {
		return "", fmt.Errorf("%w: node token %q is not the token of a valid NodeID", ErrInvalidConfig, token)
	}
	return nodeID, nil
}

// CooldownKey is the key of the bucket that node nodeID writes when it
// steps down: "cooldown-<NodeIDToken(NodeID)>" ("cooldown-db1=example=com"
// for "db1.example.com"). It is informational (docs/design.md §2.2); its
// use is in NATS permissions, which must let each node write its own.
func CooldownKey(nodeID string) string { return "cooldown-" + NodeIDToken(nodeID) }

// KVSubject is the subject a KV client publishes key of bucket to.
func KVSubject(bucket, key string) string { return "$KV." + bucket + "." + key }

// KVStream is the stream behind bucket.
func KVStream(bucket string) string { return "KV_" + bucket }

// ControlSubject is where the current leader of a cluster answers
// step-down requests: "cluster.<ClusterID>.control.stepdown". Only the
// leader replies; with no leader the request times out. Who may publish
// here is a matter of NATS permissions.
func ControlSubject(clusterID string) string { return "cluster." + clusterID + ".control.stepdown" }

// NodeControlSubject is where one node answers step-down requests:
// "cluster.<ClusterID>.control.<NodeIDToken(NodeID)>.stepdown", so node
// "db1.example.com" answers on "cluster.<ClusterID>.control.db1=example=com.stepdown".
// A node that does not lead replies with an error naming the leader it knows.
func NodeControlSubject(clusterID, nodeID string) string {
	return "cluster." + clusterID + ".control." + NodeIDToken(nodeID) + ".stepdown"
}

// StatusSubject is where node nodeID of cluster clusterID answers status
// requests: "cluster.<ClusterID>.status.<NodeIDToken(nodeID)>". Any NATS
// client may send a request there (empty payload); the reply is a
// StatusReply in JSON. The health package answers on
// "cluster.<ClusterID>.health…", so the two never meet.
func StatusSubject(clusterID, nodeID string) string {
	return ClusterStatusSubject(clusterID) + "." + NodeIDToken(nodeID)
}

// ClusterStatusSubject is where every running node of cluster clusterID
// answers status requests: "cluster.<ClusterID>.status". A request there
// with a reply inbox collects one StatusReply per running node
// (scatter-gather), as `go-cluster status` does.
func ClusterStatusSubject(clusterID string) string { return "cluster." + clusterID + ".status" }

// MemberKeyPrefix starts the key of every member record in a members
// bucket (MembersBucketName, protocol 3): the members are its keys
// "member.*", listed with one filtered watch.
const MemberKeyPrefix = "member."

// MemberKeys is the key filter of every member record: "member.*".
const MemberKeys = MemberKeyPrefix + "*"

// MemberKey is the key of node nodeID's member record:
// "member.<NodeIDToken(nodeID)>" ("member.db1=example=com" for
// "db1.example.com"): exactly two tokens, since a token has no '.'. NATS
// permissions must let each node write its own.
func MemberKey(nodeID string) string { return MemberKeyPrefix + NodeIDToken(nodeID) }
