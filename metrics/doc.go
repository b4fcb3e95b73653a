// Package metrics exports the state and events of go-cluster nodes to
// Prometheus.
//
// A Collector is both a cluster.Metrics, passed as cluster.Config.Metrics
// so that the node reports its events to it, and a prometheus.Collector,
// registered on any registry. Bound to its node with Bind, it also reads
// the node's role, epoch and NATS connection when it is scraped:
//
//	m, err := metrics.New("orders", "node-1")
//	node, err := cluster.NewNode(cluster.Config{ClusterID: "orders", NodeID: "node-1", Metrics: m, ...}, hooks)
//	err = m.Bind(node)
//	prometheus.MustRegister(m)
//	http.Handle("/metrics", promhttp.Handler())
//
// The core package stays free of Prometheus: it only knows the small
// cluster.Metrics interface.
//
// # Series
//
// Every series has the constant labels cluster and node (plus any given
// with WithConstLabels), so several nodes, of one cluster or of several,
// can share a registry. Names start with the namespace, "gocluster" unless
// WithNamespace says otherwise.
//
//	gocluster_is_leader                          gauge     1 while this node holds a live tenure
//	gocluster_epoch                              gauge     lease epoch: this node's while it leads, else the last seen
//	gocluster_leader_known                       gauge     1 while this node knows of a leader (any node)
//	gocluster_leadership_transitions_total       counter   {transition="acquired"|"lost"} this node's own
//	gocluster_leader_changes_total               counter   changes of the leader this node knows, to a node or to none
//	gocluster_renewals_total                     counter   {outcome="ok"|"conflict"|"timeout"|"error"}
//	gocluster_renewal_duration_seconds           histogram time a renewal (KV compare-and-swap) took
//	gocluster_election_wait_seconds              histogram from seeing the lease free to winning it (the answer to the write that won)
//	gocluster_hook_duration_seconds              histogram {hook="OnBecomeLeader"|"OnLoseLeadership"|"OnLeaderChange"}
//	gocluster_hook_errors_total                  counter   {hook=...} calls that returned an error or panicked
//	gocluster_fencing_checks_total               counter   {result="ok"|"not_leader"|"lease_expired"|"epoch_mismatch"|"canceled"|"error"}
//	gocluster_state_writes_total                 counter   {outcome="ok"|"fenced"|"not_leader"|"conflict"|"uncertain"|"error"} fenced state writes
//	gocluster_nats_connected                     gauge     1 while the node's connection is up (bound node only)
//	gocluster_nats_connection_state              gauge     {state=...} 1 for the current state (bound node only)
//	gocluster_nats_reconnects_total              counter   reconnections of the node's connection (bound node only)
//
// is_leader, epoch and leader_known are read from the bound node at scrape
// time; without Bind they follow the events (and the epoch of a follower
// stays at the last one it held). The series of every known label value
// exist from the start, at 0, so rate() and alerts see the first event.
//
// state_writes_total counts the node's fenced state writes (State Put,
// Delete and Commit; the node finds the Collector's ObserveStateWrite, the
// optional method ObserveStateWrite that cluster.Metrics describes). fenced: the
// NATS server refused a write because the lease had moved, a write of a
// tenure that had ended without the node knowing yet; not_leader: the node
// refused it itself, its tenure over; conflict: a Commit's Expect did not
// hold; uncertain: a server behind the stream (a stream leader cut off
// from its peers) refused it, and it may have landed, within the tenure.
// fenced and not_leader are the fence at work, around a
// failover or a handover; fenced writes outside one mean a leader that
// learns late that it was deposed (a slow or partitioned connection).
//
// election_wait_seconds is what cluster.Metrics.ObserveElection reports,
// on the winner's clock, by cause. cause="released": the time from seeing
// the release record to sending the write that won it (microseconds when a
// follower campaigns at once; longer when it sat out a handover window, a
// cooldown or a failed health check). cause="expired": the time from the
// crashed holder's last renewal reaching the winner to the winning write,
// that is LeaseTTL plus the time to win: the failover time after a crash.
// A first election, of a key that did not exist yet, is not recorded.
//
// # The agent's series
//
// An AgentCollector (NewAgentCollector) exports what go-cluster agent adds
// per cluster, with the same constant labels: checks and VIPs read from
// its AgentSource at scrape time, notify commands counted by
// ObserveNotify.
//
//	gocluster_agent_check_passing                       gauge     {check} 1 while the check passes (rise and fall applied)
//	gocluster_agent_check_duration_seconds              gauge     {check} its last probe's duration
//	gocluster_agent_vip_held                            gauge     {vip, interface} 1 while this node holds the VIP
//	gocluster_agent_vip_announcements_total             counter   {vip, interface} announcement rounds sent
//	gocluster_agent_vip_last_added_timestamp_seconds    gauge     {vip, interface} Unix time; 0: never
//	gocluster_agent_vip_last_removed_timestamp_seconds  gauge     {vip, interface} Unix time; 0: never
//	gocluster_agent_notify_runs_total                   counter   {command} runs of a notify command
//	gocluster_agent_notify_failures_total               counter   {command} runs that failed
//	gocluster_agent_notify_duration_seconds             histogram {command} their run time
//
// packaging/monitoring in the repository has a Grafana dashboard and
// alerting rules for all of these.
//
// # Alerts
//
// Over the nodes of one cluster (sum by (cluster)):
//
//   - No leader: sum by (cluster) (gocluster_is_leader) == 0 for longer
//     than LeaseTTL (a handover takes milliseconds; a crash costs LeaseTTL).
//   - Flapping: sum by (cluster) (increase(gocluster_leadership_transitions_total{transition="acquired"}[1m])) > N.
//   - Renewals failing: sum by (cluster, node) (rate(gocluster_renewals_total{outcome!="ok"}[5m])) > 0.
//   - Fencing refused: rate(gocluster_fencing_checks_total{result!="ok"}[5m]) > 0 on a node that expects to lead.
//   - Hooks failing: rate(gocluster_hook_errors_total[5m]) > 0.
//
// # Cost
//
// The cluster.Metrics methods run on the node's goroutines, some on the election
// loop: each updates an in-memory series (an atomic add after a read-locked
// lookup of its label values), does no I/O and never calls the node.
// Scrapes read the bound node's lock-light accessors.
package metrics
