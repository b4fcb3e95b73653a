package wire

import "strings"

// The names the cluster's NATS objects go by: buckets, keys, the subjects
// a KV client publishes to and the streams behind buckets. Package cluster
// re-exports the public ones, where they are documented.

// LeaseKey is the key of the lease record in the cluster's bucket.
const LeaseKey = "lease"

// BucketName is the KV bucket of a cluster: "cluster-<ClusterID>".
func BucketName(clusterID string) string { return "cluster-" + clusterID }

// MembersBucketName is the KV bucket of a cluster's member records.
func MembersBucketName(clusterID string) string { return "members-" + clusterID }

// NodeIDTokenDot stands for '.' in a NodeIDToken: allowed in NATS subjects
// and KV keys, and never in a NodeID.
const NodeIDTokenDot = '='

// NodeIDToken is nodeID as one subject token or key: each '.' as '='.
func NodeIDToken(nodeID string) string {
	return strings.ReplaceAll(nodeID, ".", string(NodeIDTokenDot))
}

// CooldownKey is the key node nodeID writes when it steps down.
func CooldownKey(nodeID string) string { return "cooldown-" + NodeIDToken(nodeID) }

// KVSubject is the subject a KV client publishes key of bucket to.
func KVSubject(bucket, key string) string { return "$KV." + bucket + "." + key }

// KVStream is the stream behind bucket.
func KVStream(bucket string) string { return "KV_" + bucket }

// ControlSubject is where the current leader of a cluster answers
// step-down requests.
func ControlSubject(clusterID string) string { return "cluster." + clusterID + ".control.stepdown" }

// NodeControlSubject is where one node answers step-down requests.
func NodeControlSubject(clusterID, nodeID string) string {
	return "cluster." + clusterID + ".control." + NodeIDToken(nodeID) + ".stepdown"
}
