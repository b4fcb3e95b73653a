// Package election is the election machine (docs/design.md): a pure
// Machine whose Handle takes one event at the node's own monotonic now
// and returns actions, built on three invariants:
//
//   - I1: epochs come from what the server checked (the record replaced,
//     or the revision or stream sequence a write was checked against);
//   - I2: one LeaseTTL per cluster, kept in the bucket's metadata;
//   - I3: a node leads, and a renewal moves its deadline, only on a
//     landing confirmed in the bucket incarnation it decided in.
//
// Clock model: every duration is measured on the node's own monotonic
// clock, passed in with each event; clock rates may differ by less than
// SafetyMargin allows (docs/design.md); wall clocks are never compared.
// The only server clock read is a bucket's age and creation time, each
// from one server's reply.
//
// It does no I/O, reads no clock, takes no lock and starts no goroutine,
// and imports the standard library and internal/wire (the lease record,
// the step-down payloads) only. internal/driver carries out its actions;
// internal/sim runs many machines against a simulated NATS.
package election
