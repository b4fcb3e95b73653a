// Package proctest runs go-cluster nodes as separate OS processes
// (internal/cmd/clusternode) against a standalone nats-server process built
// from the github.com/nats-io/nats-server/v2 module, and breaks them the way
// real deployments break: kill -9 of the leader, SIGSTOP past its lease and
// SIGCONT, SIGTERM, and a restart of the NATS server under running nodes.
// The tests measure failover times and check that a paused leader finds
// itself demoted and that its fenced writes are refused. The state tests
// do it to a leader writing fenced state (Node.State), on one server and
// on a 3-server JetStream cluster of nats-server processes, and read the
// bucket's stream with a plain JetStream client to check which writes the
// server stored, and in what order.
//
// The package has only tests:
//
//	go test ./internal/proctest -v
package proctest
