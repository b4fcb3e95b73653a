// Package chaos runs go-cluster nodes under a seeded random schedule of
// faults and checks the invariants of docs/design.md §8 the whole time.
//
// N nodes (default 5) run in one process, so that they share one monotonic
// clock and their tenures can be compared directly. They elect a leader on
// an in-process 3-server JetStream cluster (internal/natstest) with an R3
// bucket. Each node reaches every server through its own fault proxies
// (internal/faultproxy), so its connection alone can be cut, blackholed or
// stalled; and every route between two servers passes through proxies too
// (natstest.RunClusterWithRouteProxies), so a server can be cut off from
// the other two while it and its clients keep running.
//
// The schedule (math/rand/v2, seeded; the seed is printed) injects, with
// random pauses in between: cut, blackhole and stall of a node's
// connection; a stall of a node's hooks; StepDown; a graceful restart of a
// node (Stop, then a new Node with the same NodeID); a crash of a node (its
// connection closes with no release, then a new Node); shutdown and restart
// of a NATS server, the stream leader half of the time; a route partition
// (route-partition): the routes between one server and the other two cut
// or blackholed, then healed, the server being the bucket stream's leader
// a third of the time and the JetStream meta leader a third of the time,
// for 0.5 to 3 LeaseTTLs or, half of the time, 4 to 12 seconds: long
// enough for the replicas to elect another stream leader (after 4-9s) and
// for the cut-off one to step down (after 10s without a quorum), while a
// node connected to that server alone still talks to it. Server shutdowns
// and route partitions never overlap, so that two servers always keep a
// quorum (quorum-loss, off by default, shuts two down on purpose). And
// out-of-band changes of the store, all in scope of docs/design.md §5:
// garbage written into the lease key (values that do not decode, markers,
// and records of this protocol at epochs outside their incarnation's
// range, MaxInt64 among them: garbage.go says why no record of another
// version), the bucket deleted and created again as go-cluster init
// --force would (revisions restart at 1; the cluster's LeaseTTL, and the
// old ceiling carried over, in its metadata), the lease key compacted
// away (purged, then its marker purged), and long-ttl-garbage: the
// bucket's LeaseTTL raised 3 to 5 times, a tenure begun with it, the TTL
// lowered back (the ceiling stays), then garbage or a marker while that
// tenure leads, blackholed half of the time (longttl.go). Out-of-band
// faults come at most once per Options.OutOfBandGap, so that the cluster
// can elect in between. See FaultKind; -chaos.faults picks the kinds.
//
// The run creates the bucket first, as go-cluster init would, with the
// cluster's LeaseTTL. One node of five is configured with a LeaseTTL 3 to
// 5 times longer: it follows the bucket's (I2), but a Start of it that
// finds no bucket creates one with its own. No node whose LeaseTTL is
// below a deleted bucket's ceiling may start until the bucket is back or
// that ceiling has passed since the deletion, since a bucket it created
// would break I2's assumption (docs/design.md §2.7).
//
// A Checker records every tenure, from OnBecomeLeader until its ctx is
// cancelled, and asserts that no two overlap, that every epoch handed out is
// positive (not wrapped) and above every epoch handed out before it (across
// bucket recreations too), and that each Node's OnBecomeLeader and
// OnLoseLeadership alternate. A cluster with no leader long after every
// fault healed is a liveness failure. TestChaosOutOfRangeEpoch checks
// precisely what follows a record out of range (MaxInt64 among them):
// nobody stops, no node takes it before the ceiling, and the next epoch is
// base + revision + 1. Every
// leader writes continuously to a Fence, a resource that accepts a write
// only with an epoch at least the highest it has seen, using the epoch
// ValidateLeadership returns: the current leader must never be refused,
// and every ended tenure later tries one stale write that must be refused.
//
// Every leader also writes fenced state through Node.State() the whole
// time: a Put, or a Commit of 2 or 3 keys a quarter of the time (the run
// enables atomic batches with State.EnableCommit, and again after a
// bucket recreate), each value tagged "<instance>/<epoch>/<sequence>", plus
// one last write after its tenure ends, which must be refused or land in a
// later tenure of the same Node. Every write's outcome is kept:
// acknowledged (with its revision), refused (ErrFenced, ErrNotLeader), or
// unknown (a timeout, the node stopping). An order recorder, on a
// connection of its own that no fault touches, follows the bucket's
// stream from sequence 1 before the first node starts, with a consumer it
// makes again from the next sequence whenever delivery stops; a bucket
// deleted and created again is recorded as a new incarnation from
// sequence 1. At the end CheckState asserts on that total order: every
// state write in it was accepted while its writer held the lease (the
// latest lease record before it is a held record of this protocol of the
// writer's NodeID at the epoch of its Go-Cluster-Epoch header, in its
// incarnation's range, and that epoch is no other instance's tenure);
// every acknowledged write is in it at the revision State returned; no
// refused write is in it; a Commit of unknown outcome is in it whole or
// not at all. What the recorder could not see is
// counted, not judged: a write after messages it missed (removed by the
// bucket's 8-revision history or a purge before it read them) is not
// checked, and an acknowledged write is excused when the bucket was
// deleted after it was sent or its revision is one the recorder missed.
// A compaction purges only the lease key and the markers, so it removes
// no state write. The report counts writes acknowledged, refused and of
// unknown outcome, and what was checked, unchecked and excused.
//
// Run returns a Report: availability (share of time some node led), leader
// transitions, faults by kind, the state writes and their check, the
// longest time without a leader compared with LeaseTTL, the recovery after
// healing, and every violation and liveness failure found. TestChaos runs
// a short seeded run in the normal test suite; a long run is
//
//	go test ./internal/proof/chaos -run '^TestChaos$' -chaos.duration=10m -chaos.seed=42 -v -timeout 30m
//
// (-chaos.nodelog=FILE -chaos.nodeloglevel=debug keeps the nodes' own
// logs, one JSON line each, tagged with the instance), and one focused on
// the out-of-band faults is
//
//	go test ./internal/proof/chaos -run '^TestChaos$' -chaos.duration=5m -chaos.seed=7 -chaos.faults=out-of-band -v -timeout 30m
package chaos
