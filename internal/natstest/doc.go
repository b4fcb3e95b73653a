// Package natstest is the test harness shared by every test in go-cluster.
//
// It runs real, embedded nats-server instances in-process (no mocks): a
// single JetStream-enabled server ([RunServer]) or a JetStream cluster joined
// by routes ([RunCluster]). Servers can be shut down and restarted on the same
// port and store directory, so JetStream state survives a restart.
//
// The servers are those of the public package clustertest; this package adds
// what only go-cluster's own tests need: client connections with test
// defaults, stream leaders, a member restart that waits for the rejoin, and
// [RunClusterWithRouteProxies], a cluster whose every route between two
// members passes through a proxy (an internal/faultproxy one), so that a
// test can cut or blackhole the routes between two servers and heal them:
// cut a stream leader off from its replicas, not only a client from a
// server. [RunHub] and [RunLeaf] make a hub with a JetStream domain and a
// leaf node connected to it, the topology of a node behind a leaf.
//
// It also provides [WaitFor], to poll for a condition instead of sleeping, and
// [CheckLeaks], a goroutine-leak check to call first in a test.
//
// Everything is bound to 127.0.0.1 and cleaned up through t.Cleanup.
package natstest
