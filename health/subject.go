package health

import "github.com/ozanturksever/go-cluster/internal/wire"

// SubjectPrefix is the first token of every health subject.
const SubjectPrefix = "cluster"

// NodeSubject is the subject the node nodeID of cluster clusterID answers on:
// "cluster.<clusterID>.health.<token>", where token is
// wire.NodeIDToken(nodeID): the NodeID with each '.' written '=', so that
// node "db1.example.com" answers on "cluster.<clusterID>.health.db1=example=com".
// Any NATS client can send a request there with an empty payload, the NATS
// CLI included.
func NodeSubject(clusterID, nodeID string) string {
	return SubjectPrefix + "." + clusterID + ".health." + wire.NodeIDToken(nodeID)
}

// ClusterSubject is the subject every node of cluster clusterID answers on:
// "cluster.<clusterID>.health". A request published there with a reply inbox
// collects one response per running node (scatter-gather); see
// Client.QueryCluster. It is not a wildcard, so it never matches another
// cluster's nodes.
func ClusterSubject(clusterID string) string {
	return SubjectPrefix + "." + clusterID + ".health"
}
