// Package election is go-cluster's election as a pure state machine
// (Machine): every decision of a Node's election, with its I/O turned
// into actions and the answers into events. It performs no I/O, reads no
// clock, starts no goroutine and takes no lock (TestMachineIsPure): the
// driver (package cluster, driver.go) feeds it events with the node's own
// monotonic now and carries out the actions it returns, and the
// simulator (internal/sim) does the same with simulated clocks.
//
// It has at most one request out at a time. Commands, watch entries and
// other events that arrive meanwhile are kept and handled, in order, once
// the answer is in, so that a decision spanning several requests is never
// cut into. Two things are known at once: the connection's state, and the
// tenure deadline (a tick at the deadline ends the tenure even while a
// request is out).
//
// It imports the standard library only (TestImportsStandardLibraryOnly),
// so it cannot reach NATS, the node's logger or its hooks: Params carries the part
// of cluster.Config it reads. Events go in through Machine.Handle at the
// node's now; the Actions it returns are carried out by the driver, like
// etcd's raft takes messages in Step and hands actions out in Ready.
// docs/design.md §1 and §4 describe it, docs/sim.md its simulator.
package election
