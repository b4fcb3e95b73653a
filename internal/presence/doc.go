// Package presence is how a running node shows itself to tools: it
// answers status requests on its own subject and the cluster's
// (wire.StatusSubject, wire.ClusterStatusSubject), refuses to start beside
// another process with its NodeID, and announces itself in the members
// bucket at Start and withdraws at Stop (wire.MemberRecord), so that
// `go-cluster status` lists running nodes and crashed ones. None of it is
// part of the election: no decision reads it.
//
// The node passes what it knows (Self, and a View read when a request
// comes); presence never imports package cluster.
package presence
