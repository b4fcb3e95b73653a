// Package clustertest runs real NATS servers with JetStream inside the
// current process, for the tests of a service built on go-cluster and for
// programs (demos, examples) that must run with nothing installed.
//
// In a test, [RunServer] starts one server and [RunCluster] a JetStream
// cluster of several servers joined by routes; both stop the servers and
// remove their store directories through t.Cleanup:
//
//	func TestFailover(t *testing.T) {
//		srv := clustertest.RunServer(t)
//		node, err := cluster.NewNode(cluster.Config{
//			ClusterID: "orders",
//			NodeID:    "node-1",
//			NATSURLs:  srv.URLs(),
//			LeaseTTL:  time.Second,
//		}, nil)
//		...
//	}
//
// With a cluster, set cluster.Config.Bucket.Replicas to its size so the
// lease bucket is replicated on every server:
//
//	c := clustertest.RunCluster(t, 3)
//	cfg := cluster.Config{ClusterID: "orders", NodeID: "node-1", NATSURLs: c.URLs(), Bucket: cluster.BucketOptions{Replicas: 3}}
//
// Outside a test, [StartServer] and [StartCluster] do the same and return an
// error instead of failing a test; call Close when done.
//
// Every server listens on 127.0.0.1 only, on a random free port, with a
// fresh temporary store directory. A server is returned once a client can
// use JetStream on it; a cluster once its JetStream meta leader is elected
// and a stream replicated on every server can be created. The servers' logs
// go to log/slog at debug level. [WithOptions] changes any other server
// option (TLS, accounts, limits).
package clustertest
