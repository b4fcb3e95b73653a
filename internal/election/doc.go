// Package election is the election machine (docs/design.md): a pure
// Machine whose Handle takes one event at the node's own monotonic now
// and returns actions, built on three invariants:
//
//   - I1: epochs come from what the server checked (the record replaced,
//     or the revision or stream sequence a write was checked against);
//   - I2: every wait covers the longest TTL a holder may use, the
//     cluster's ceiling kept where a re-create of the bucket cannot lose it;
//   - I3: a node leads, and a renewal moves its deadline, only on its own
//     write acknowledged over a value it waited out: revisions name their
//     bucket's incarnation.
//
// Clock model (docs/design.md §3): every duration is measured on the
// node's own clock, passed in with each event; rates may differ by less
// than SafetyMargin allows; no wall clocks are compared. Read from
// elsewhere: a bucket's age, and its creator's clock (its first sequence).
//
// It does no I/O, reads no clock, takes no lock and starts no goroutine,
// and imports the standard library and internal/wire (the lease record,
// the step-down payloads) only. internal/engine carries out its actions;
// internal/proof/sim runs many machines against a simulated NATS.
package election
