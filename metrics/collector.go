package metrics

import (
	"fmt"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// Collector is a Prometheus collector for one go-cluster node. It is a
// cluster.Metrics (pass it as cluster.Config.Metrics) and a
// prometheus.Collector (register it on any registry). Bound to the node
// with Bind, it also reads the node's role, epoch and connection at scrape
// time.
//
// Every series carries the constant labels cluster and node, so the
// collectors of several nodes, even of several clusters, can share one
// registry. All methods are safe for concurrent use; the cluster.Metrics methods
// only update in-memory counters and never block.
type Collector struct {
	clusterID, nodeID string
	node              atomic.Pointer[cluster.Node]

	// What the events say, for scrapes of a collector with no bound node.
	leading     atomic.Bool
	epoch       atomic.Int64
	leaderKnown atomic.Bool

	// Event series.
	transitions    *prometheus.CounterVec
	acquired, lost prometheus.Counter
	leaderChanges  prometheus.Counter
	renewals       *prometheus.CounterVec
	renewalLatency prometheus.Histogram
	electionWait   *prometheus.HistogramVec
	hookDuration   *prometheus.HistogramVec
	hookErrors     *prometheus.CounterVec
	fencing        *prometheus.CounterVec
	stateWrites    *prometheus.CounterVec

	// Scrape-time series.
	isLeaderDesc, epochDesc, leaderKnownDesc *prometheus.Desc
	connectedDesc, connStateDesc, reconnDesc *prometheus.Desc
}

// New returns a Collector for node nodeID of cluster clusterID, which must
// be valid (wire.CheckIdentifier, wire.CheckNodeID). The error wraps
// ErrInvalidConfig and names the field.
//
//	m, _ := metrics.New("orders", "node-1")
//	node, _ := cluster.NewNode(cluster.Config{ClusterID: "orders", NodeID: "node-1", Metrics: m, ...}, hooks)
//	_ = m.Bind(node)
//	prometheus.MustRegister(m)
func New(clusterID, nodeID string, opts ...Option) (*Collector, error) {
	if err := wire.CheckIdentifier("clusterID", clusterID); err != nil {
		return nil, err
	}
	if err := wire.CheckNodeID("nodeID", nodeID); err != nil {
		return nil, err
	}
	o := options{namespace: DefaultNamespace, constLabels: prometheus.Labels{}}
	for _, opt := range opts {
		opt(&o)
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	labels := prometheus.Labels{LabelCluster: clusterID, LabelNode: nodeID}
	for k, v := range o.constLabels {
		labels[k] = v
	}
	c := &Collector{clusterID: clusterID, nodeID: nodeID}
	c.initEvents(o.namespace, labels)
	c.initScrape(o.namespace, labels)
	return c, nil
}

// initEvents makes the series the cluster.Metrics methods update, with a zero
// series for every known label value.
func (c *Collector) initEvents(ns string, labels prometheus.Labels) {
	c.transitions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Name: NameLeadershipTransitions, ConstLabels: labels,
		Help: "Times this node became leader (transition=\"acquired\") or stopped leading (transition=\"lost\").",
	}, []string{LabelTransition})
	c.acquired = c.transitions.WithLabelValues(TransitionAcquired)
	c.lost = c.transitions.WithLabelValues(TransitionLost)
	c.leaderChanges = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: ns, Name: NameLeaderChanges, ConstLabels: labels,
		Help: "Times the leader known to this node changed, to another node or to none.",
	})
	c.renewals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Name: NameRenewals, ConstLabels: labels,
		Help: "Lease renewals by this node while leading, by outcome (ok, conflict, timeout, error).",
	}, []string{LabelOutcome})
	for _, o := range renewalOutcomes() {
		c.renewals.WithLabelValues(o)
	}
	c.renewalLatency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: ns, Name: NameRenewalDuration, ConstLabels: labels, Buckets: renewalBuckets(),
		Help: "Time a lease renewal (a KV compare-and-swap) took, whatever its outcome.",
	})
	c.electionWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: ns, Name: NameElectionWait, ConstLabels: labels, Buckets: electionBuckets(),
		Help: "Time without a live tenure, on the winner's clock, before this node won the lease: since it saw the release (cause released), or since the crashed holder's last renewal reached it (cause expired).",
	}, []string{LabelCause})
	for _, cause := range electionCauses() {
		c.electionWait.WithLabelValues(cause)
	}
	c.hookDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: ns, Name: NameHookDuration, ConstLabels: labels, Buckets: hookBuckets(),
		Help: "Time a hook call took, by hook.",
	}, []string{LabelHook})
	c.hookErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Name: NameHookErrors, ConstLabels: labels,
		Help: "Hook calls that returned an error or panicked, by hook.",
	}, []string{LabelHook})
	for _, h := range hookNames() {
		c.hookDuration.WithLabelValues(h)
		c.hookErrors.WithLabelValues(h)
	}
	c.fencing = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Name: NameFencingChecks, ConstLabels: labels,
		Help: "ValidateLeadership calls, by result (ok, not_leader, lease_expired, epoch_mismatch, canceled, error).",
	}, []string{LabelResult})
	for _, r := range fencingResults() {
		c.fencing.WithLabelValues(r)
	}
	c.stateWrites = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Name: NameStateWrites, ConstLabels: labels,
		Help: "Fenced state writes (State Put, Delete, Commit) by this node, by outcome (ok; fenced: the server refused a write of a tenure that had ended; not_leader: refused by the node itself; conflict: a Commit's Expect did not hold; uncertain: refused by a server behind the stream, may have landed; error).",
	}, []string{LabelOutcome})
	for _, o := range stateWriteOutcomes() {
		c.stateWrites.WithLabelValues(o)
	}
}

// initScrape makes the descriptions of the series read at scrape time.
func (c *Collector) initScrape(ns string, labels prometheus.Labels) {
	name := func(n string) string { return prometheus.BuildFQName(ns, "", n) }
	c.isLeaderDesc = prometheus.NewDesc(name(NameIsLeader),
		"1 while this node holds a live tenure as leader, else 0.", nil, labels)
	c.epochDesc = prometheus.NewDesc(name(NameEpoch),
		"The lease epoch (fencing token): this node's while it leads, else the last one it saw; 0 if none.", nil, labels)
	c.leaderKnownDesc = prometheus.NewDesc(name(NameLeaderKnown),
		"1 while this node knows of a leader (itself or another node), 0 while nobody leads or it does not know yet.", nil, labels)
	c.connectedDesc = prometheus.NewDesc(name(NameNATSConnected),
		"1 while the node's NATS connection is connected, else 0. Only with a bound, started node.", nil, labels)
	c.connStateDesc = prometheus.NewDesc(name(NameNATSConnectionState),
		"State of the node's NATS connection: 1 for the current state, 0 for the others. Only with a bound, started node.", []string{LabelState}, labels)
	c.reconnDesc = prometheus.NewDesc(name(NameNATSReconnects),
		"Times the node's NATS connection reconnected. Only with a bound, started node.", nil, labels)
}

// Bind makes scrapes read is_leader, epoch and leader_known from n, and
// report its NATS connection (nats_connected, nats_connection_state,
// nats_reconnects_total). Without Bind they come from the events alone,
// and the connection series are absent. n must have the Collector's
// ClusterID and NodeID; the error wraps ErrInvalidConfig. A later Bind
// replaces the node.
func (c *Collector) Bind(n *cluster.Node) error {
	if n == nil {
		return fmt.Errorf("%w: Bind: nil node", ErrInvalidConfig)
	}
	if n.Config().ClusterID != c.clusterID || n.Config().NodeID != c.nodeID {
		return fmt.Errorf("%w: Bind: node %s/%s, collector %s/%s", ErrInvalidConfig,
			n.Config().ClusterID, n.Config().NodeID, c.clusterID, c.nodeID)
	}
	c.node.Store(n)
	return nil
}

// ClusterID returns the cluster label of the Collector's series.
func (c *Collector) ClusterID() string { return c.clusterID }

// NodeID returns the node label of the Collector's series.
func (c *Collector) NodeID() string { return c.nodeID }
