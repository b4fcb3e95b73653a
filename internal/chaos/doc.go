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
// of a NATS server, the stream leader included; and out-of-band changes of
// the store: garbage written into the lease key, the bucket deleted and
// created again (revisions restart at 1), the lease key compacted away
// (purged, then its marker purged), and garbage or a delete while a node
// with a long LeaseTTL leads (some nodes get 3 to 5 x LeaseTTL). Out-of-band
// faults come at most once per Options.OutOfBandGap, so that the cluster can
// elect in between. See FaultKind; -chaos.faults picks the kinds.
//
// A Checker records every tenure, from OnBecomeLeader until its ctx is
// cancelled, and asserts that no two overlap, that every epoch handed out is
// positive (not wrapped) and above every epoch handed out before it (across
// bucket recreations too), and that each Node's OnBecomeLeader and
// OnLoseLeadership alternate. A cluster with no leader long after every
// fault healed is a liveness failure. A forged lease record at the largest
// epoch is tested on its own by TestChaosForgedMaxEpoch: after it correct
// nodes refuse to campaign for good, so a run could not go on. Every
// leader writes continuously to a Fence, a resource that accepts a write
// only with an epoch at least the highest it has seen, using the epoch
// ValidateLeadership returns: the current leader must never be refused,
// and every ended tenure later tries one stale write that must be refused.
//
// Run returns a Report: availability (share of time some node led), leader
// transitions, faults by kind, the longest time without a leader compared
// with LeaseTTL, the recovery after healing, and every violation and
// liveness failure found. TestChaos runs a short seeded
// run in the normal test suite; a long run is
//
//	go test ./internal/chaos -run '^TestChaos$' -chaos.duration=10m -chaos.seed=42 -v -timeout 30m
//
// and one focused on the out-of-band faults is
//
//	go test ./internal/chaos -run '^TestChaos$' -chaos.duration=5m -chaos.seed=7 -chaos.faults=out-of-band -v -timeout 30m
package chaos
