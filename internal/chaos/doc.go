// Package chaos runs go-cluster nodes under a seeded random schedule of
// faults and checks the invariants of docs/design.md §8 the whole time.
//
// N nodes (default 5) run in one process, so that they share one monotonic
// clock and their tenures can be compared directly. They elect a leader on
// an in-process 3-server JetStream cluster (internal/natstest) with an R3
// bucket. Each node reaches every server through its own fault proxies
// (internal/faultproxy), so its connection alone can be cut, blackholed or
// stalled.
//
// The schedule (math/rand/v2, seeded; the seed is printed) injects, with
// random pauses in between: cut, blackhole and stall of a node's
// connection; a stall of a node's hooks; StepDown; a graceful restart of a
// node (Stop, then a new Node with the same NodeID); a crash of a node (its
// connection closes with no release, then a new Node); shutdown and restart
// of a NATS server, the stream leader included; and garbage written into the
// lease key. See FaultKind.
//
// A Checker records every tenure, from OnBecomeLeader until its ctx is
// cancelled, and asserts that no two overlap, that epochs strictly increase,
// and that each Node's OnBecomeLeader and OnLoseLeadership alternate. Every
// leader writes continuously to a Fence, a resource that accepts a write
// only with an epoch at least the highest it has seen, using the epoch
// ValidateLeadership returns: the current leader must never be refused,
// and every ended tenure later tries one stale write that must be refused.
//
// Run returns a Report: availability (share of time some node led), leader
// transitions, faults by kind, the longest time without a leader compared
// with LeaseTTL, and every violation found. TestChaos runs a short seeded
// run in the normal test suite; a long run is
//
//	go test ./internal/chaos -run '^TestChaos$' -chaos.duration=10m -chaos.seed=42 -v -timeout 30m
package chaos
