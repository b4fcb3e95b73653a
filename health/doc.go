// Package health lets the nodes of a go-cluster cluster answer health
// queries over NATS request/reply, and lets anyone ask them.
//
// # Answering
//
// A Checker answers for one node. Once started it replies on
//
//	cluster.<ClusterID>.health.<NodeID>   (this node)
//	cluster.<ClusterID>.health            (every node of the cluster)
//
// where <NodeID> is the NodeID as a subject token, wire.NodeIDToken: a
// NodeID may be a host name, and each of its dots is written '=' there
// (node "db1.example.com" answers on cluster.orders.health.db1=example=com;
// see NodeSubject). Replies carry the NodeID as it is.
//
// with a JSON Response:
//
//	{"nodeId":"node-1","role":"PRIMARY","leader":"node-1","uptimeMs":5231,
//	 "timestamp":1767225600000,"custom":{"version":"1.4.2"},"epoch":7}
//
// nodeId, role, leader, uptimeMs, timestamp and custom are the fields of the
// specification (custom is omitted when empty); epoch, the lease epoch the
// node knows, is an addition, omitted when unknown. So is notReady, present
// only when the node may not lead as far as its own
// cluster.Config.ReadinessCheck goes, and saying why:
//
//	{"nodeId":"node-2","role":"PASSIVE","leader":"node-1","uptimeMs":5120,
//	 "timestamp":1767225600000,"epoch":7,
//	 "notReady":"cluster: not ready: 3 readiness checks failed in a row: database unreachable"}
//
// Its absence means ready, so replies of nodes without a ReadinessCheck, or
// built before the field existed, read as ready (Response.IsReady).
//
// role keeps the specification's words (cluster.Role's String values):
// "PRIMARY" is the leader and "PASSIVE" a node that does not lead, a
// follower (or an observer, made by cluster.NewObserver, if one answers
// health queries). Response.IsLeader tests for the leader; the CLI's
// tables show leader and follower.
//
// A request's payload must be empty or one JSON object of at most
// MaxRequestSize bytes (its fields are reserved and ignored), so any NATS
// client can ask, for example the NATS CLI:
//
//	nats req cluster.orders.health.node-1 ''
//
// Anything else gets an error reply, {"nodeId":…,"timestamp":…,"error":"…"}
// (with notReady when the node is not ready); so does a request when a value
// given to SetCustom cannot be encoded as JSON. A request without a reply subject is ignored.
//
// # Following a Node
//
// An Adapter is a cluster.Hooks that sets the Checker's role and leader from
// the node's hooks; compose it with the application's hooks
// (cluster.ComposeHooks(app, adapter)) and bind it to the node for the epoch
// and readiness (cluster.Node.Ready). See Adapter. Without a Node, a
// Checker reports readiness with SetReadyFunc.
//
// # Asking
//
// Client (or a started Checker) asks one node with QueryNode, or the whole
// cluster at once with QueryCluster / QueryClusterN: one request on the
// cluster subject, every node's reply gathered on one inbox until the
// timeout (or until n replies arrived). No node IDs need to be known in
// advance. A node, or a cluster, that nobody answers for is reported at once
// with ErrNoResponders, not after the timeout.
//
// Errors wrap the sentinel errors of this package (ErrInvalidConfig is
// cluster.ErrInvalidConfig), or the caller's context error; test them with
// errors.Is.
package health
