// Package election is the next election machine (docs/design-next.md,
// issue 31): the same shape as internal/election, a pure Machine whose
// Handle takes one event at the node's own monotonic now and returns
// actions, rebuilt on three invariants instead of one rule per failing
// seed:
//
//   - I1: epochs come from what the server checked (the record replaced,
//     or the revision or stream sequence a write was checked against);
//   - I2: one LeaseTTL per cluster, kept in the bucket's metadata;
//   - I3: a node leads, and a renewal moves its deadline, only on a
//     landing confirmed in the bucket incarnation it decided in.
//
// Clock model: every duration is measured on the node's own monotonic
// clock, passed in with each event; clock rates may differ by less than
// SafetyMargin allows (docs/design.md §3.4); wall clocks are never
// compared. The only server clock read is a bucket's age and creation
// time, each from one server's reply.
//
// It does no I/O, reads no clock, takes no lock and starts no goroutine,
// and imports the standard library and internal/election's wire
// vocabulary only. It is built beside the machine the driver runs today
// and is not wired into it yet: the simulator and the driver move to it
// whole, in one change, once it is proven.
package election
