// Package cluster makes N copies of a service agree on one leader through
// NATS JetStream KV, fences a stale leader with a monotonic epoch, and tells
// the application through Hooks.
//
// # Use
//
// Make a Node with NewNode (it campaigns) or NewObserver (it only follows),
// Start it (or Run it: Start, then Stop with a release when a ctx ends),
// and react in Hooks: start the leader's work in OnBecomeLeader
// (its ctx is the tenure: it is cancelled the moment leadership ends), stop it
// in OnLoseLeadership. Before a critical operation, ValidateLeadership proves
// tenure with a compare-and-swap and returns the epoch to hand to a fenced
// resource, which refuses writes carrying an epoch lower than the highest it
// has seen. StepDown and Stop hand over gracefully: a follower takes over in
// milliseconds, not after a lease expiry. Done and Err report a permanent
// failure (bucket deleted, permission denied). Events delivers the same
// events as a channel, for code that selects; Config.Metadata is published
// with the lease and read with Lease.
//
// A NodeID may be the host name, dots included ("db1.example.com"; see
// Config.NodeID). In NATS subjects and KV keys it is written as a token,
// each '.' as '=' ("db1=example=com"); a ClusterID has no dots.
//
// The add-on packages plug into the hooks: health answers NATS health
// requests, vip moves a virtual IP address. ComposeHooks combines them with
// the application's hooks in a documented order.
//
// # Protocol
//
// Each cluster has a KV bucket "cluster-<ClusterID>" with the key "lease"
// holding the JSON Lease; the bucket's metadata keeps the cluster's one
// LeaseTTL, which every node follows whatever its Config says. An
// acquisition writes the record's epoch+1 with a compare-and-swap on the
// KV revision (over anything that is not a record, or into an absent key,
// an epoch counted from the revision or stream sequence the server
// checked), and leads on the write's acknowledgement: the bucket's
// sequences start at its creation time in microseconds, so a revision
// names the bucket it belongs to, and a write aimed at a bucket deleted
// since lands nowhere. The leader renews with a CAS every RenewInterval;
// followers watch the key and send no requests in steady state. StepDown and Stop write a released
// record (empty node_id, same epoch), so the key is never deleted and the
// epoch never goes back.
//
// # Clock model
//
// No decision compares the clocks of two machines; expires_at in the record
// is for people. Every node measures time on its own monotonic clock:
//
//   - A follower takes over a held lease only after it has seen the same KV
//     revision unchanged for the record's TTL.
//   - The leader's tenure ends, on its own, at
//     lastSuccessfulRenewalSent + LeaseTTL - SafetyMargin.
//
// A follower first sees a revision after the leader sent it, so the old
// leader has stopped before a successor can start, even when it is cut off
// from NATS and hears nothing. SafetyMargin (default LeaseTTL/10) covers
// clock-rate drift between machines and the time to cancel work. Clocks may
// be set to any time of day; only their rates matter. One LeaseTTL per
// cluster, kept by the bucket, so no node waits less than a holder's TTL.
// Garbage, deleted or compacted keys and a recreated bucket are waited out
// for the longest TTL the bucket allows (docs/design.md §9 has the rules).
//
// # Timing
//
// With the defaults (LeaseTTL 10s, RenewInterval 3s) followers replace a
// crashed leader LeaseTTL after they last saw it renew: between
// LeaseTTL-RenewInterval and LeaseTTL after the crash. A node that has just
// started waits a full LeaseTTL before taking over a lease it did not see
// released. A graceful StepDown or Stop hands over within a few KV round
// trips.
//
// # Operations
//
// Config.Priority makes a node the preferred leader: once it has followed
// for a LeaseTTL (Config.PreemptDelay, keepalived's preempt_delay, if
// longer) it asks a leader of lower priority to hand over, which the
// leader does through the normal release. Node.SetPriority lowers the
// priority at run time (keepalived's weighted checks). Config.ReadinessCheck couples
// leadership to the application's health: a node campaigns only after a
// check has passed, and a leader that fails it ReadinessThreshold times in
// a row steps down (Node.Ready says why a node may not lead). Operators can ask the leader to step down, optionally in favour
// of a named node, with a request on "cluster.<ClusterID>.control.stepdown"
// (go-cluster stepdown; docs/cli.md);
// StepDownTo does the same from code. Config.Metrics receives the events a
// metrics system needs (package metrics has a Prometheus collector).
//
// The bucket: a node creates it when absent with Config.Bucket.Replicas,
// Bucket.Storage and Bucket.Placement; go-cluster init creates it ahead
// of time with the same settings, which makes the first election
// immediate once the bucket is older than LeaseTTL. A node connected to a leaf node sets Config.JetStreamDomain to
// the hub's domain (or JetStreamAPIPrefix for an imported JetStream).
//
// Members: every campaigning node answers a status request on
// "cluster.<ClusterID>.status" and "cluster.<ClusterID>.status.<node>",
// and announces itself at Start with a member record under
// "members.<ClusterID>.<node>" in the account's bucket "go-cluster"
// (created when absent, or by go-cluster init; it also keeps each
// cluster's TTL ceiling, so that a cluster costs its server one stream of
// its own), and deletes it at Stop, so that go-cluster status lists
// crashed members as down. The account's bucket is not the election's
// (its writes would otherwise fail a pending Create of the lease): both
// writes are best effort, and a node not allowed to use it elects all the
// same.
//
// # Fenced state
//
// Node.State (package state) keeps small values in the cluster's bucket
// (keys "state.<key>") that every node reads and only the leader writes. Each write carries a
// precondition the NATS server checks: the lease key's latest revision is
// still the one this node's tenure wrote. A write that returns success was
// accepted while this node held the lease; a write by a node that has lost
// the lease is never accepted (state.ErrFenced). Get reads through the
// bucket stream's leader and sees every acknowledged write; Keys and Watch
// may trail by the writes in flight.
//
// # Errors
//
// Errors wrap the package's sentinel values (ErrNotLeader, ErrInvalidConfig,
// ErrBucketDeleted, ...) and are tested with errors.Is. NewNode and
// NewObserver report every problem of a Config at once. Stop and StepDown
// called from a hook (any Node's) cannot wait for hooks: they start the
// operation and return ErrCalledFromHook at once.
package cluster
