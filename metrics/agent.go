package metrics

import (
	"fmt"
	"time"

	"github.com/ozanturksever/go-cluster/internal/wire"
	"github.com/prometheus/client_golang/prometheus"
)

// Metric names of go-cluster agent's series (AgentCollector), without the
// namespace.
const (
	NameCheckPassing     = "agent_check_passing"
	NameCheckDuration    = "agent_check_duration_seconds"
	NameVIPHeld          = "agent_vip_held"
	NameVIPAnnouncements = "agent_vip_announcements_total"
	NameVIPLastAdded     = "agent_vip_last_added_timestamp_seconds"
	NameVIPLastRemoved   = "agent_vip_last_removed_timestamp_seconds"
	NameNotifyRuns       = "agent_notify_runs_total"
	NameNotifyFailures   = "agent_notify_failures_total"
	NameNotifyDuration   = "agent_notify_duration_seconds"
)

// Labels of the agent's series, besides cluster and node.
const (
	LabelCheck     = "check"     // a check's name
	LabelVIP       = "vip"       // a VIP's address with its prefix length
	LabelInterface = "interface" // a VIP's interface
	LabelCommand   = "command"   // a notify command: the event it runs on, or "state"
)

// AgentNames are the full names of every AgentCollector series in the
// namespace ns ("gocluster" by default): what a dashboard may refer to.
func AgentNames(ns string) []string {
	names := []string{NameCheckPassing, NameCheckDuration, NameVIPHeld, NameVIPAnnouncements, NameVIPLastAdded,
		NameVIPLastRemoved, NameNotifyRuns, NameNotifyFailures, NameNotifyDuration}
	for i, n := range names {
		names[i] = prometheus.BuildFQName(ns, "", n)
	}
	return names
}

// CheckState is one check's standing, as an AgentSource reports it.
type CheckState struct {
	Name    string
	Passing bool          // its standing, rise and fall applied
	Took    time.Duration // its last probe; 0 before the first
}

// VIPState is one VIP, as an AgentSource reports it (see vip.Stats).
type VIPState struct {
	Address   string // with its prefix length: "10.0.0.100/24"
	Interface string
	Held      bool
	// Announcements counts announcement rounds sent.
	Announcements          uint64
	LastAdded, LastRemoved time.Time // zero: never
}

// AgentSource is what an AgentCollector reads at scrape time: the
// agent's checks and VIPs of one cluster now.
type AgentSource interface {
	CheckStates() []CheckState
	VIPStates() []VIPState
}

// AgentCollector exports what go-cluster agent adds to a node's series:
// per check (passing, last probe's duration) and per VIP (held,
// announcements, last added and removed), read from its AgentSource at
// scrape time, and per notify command (runs, failures, duration), counted
// by ObserveNotify. Series carry the labels cluster and node, as a
// Collector's do.
type AgentCollector struct {
	src                                    AgentSource
	checkPassing, checkDuration            *prometheus.Desc
	vipHeld, vipAnnounced, vipAdded, vipGo *prometheus.Desc
	notifyRuns, notifyFailures             *prometheus.CounterVec
	notifyDuration                         *prometheus.HistogramVec
}

// NewAgentCollector returns the agent series of node nodeID of cluster
// clusterID (both valid, as for New), read from src. Of the options,
// WithNamespace and WithConstLabels apply. The error wraps
// ErrInvalidConfig.
func NewAgentCollector(clusterID, nodeID string, src AgentSource, opts ...Option) (*AgentCollector, error) {
	if err := wire.CheckIdentifier("clusterID", clusterID); err != nil {
		return nil, err
	}
	if err := wire.CheckNodeID("nodeID", nodeID); err != nil {
		return nil, err
	}
	if src == nil {
		return nil, fmt.Errorf("%w: NewAgentCollector: nil source", ErrInvalidConfig)
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
	ns := o.namespace
	desc := func(name, help string, vars ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(ns, "", name), help, vars, labels)
	}
	vipVars := []string{LabelVIP, LabelInterface}
	return &AgentCollector{
		src:           src,
		checkPassing:  desc(NameCheckPassing, "1 while the check passes (its rise and fall applied), else 0.", LabelCheck),
		checkDuration: desc(NameCheckDuration, "How long the check's last probe took.", LabelCheck),
		vipHeld:       desc(NameVIPHeld, "1 while this node holds the VIP (added, kept and announced until its tenure ends), else 0.", vipVars...),
		vipAnnounced:  desc(NameVIPAnnouncements, "Announcement rounds sent for the VIP (gratuitous ARP, or unsolicited neighbour advertisement).", vipVars...),
		vipAdded:      desc(NameVIPLastAdded, "When this node last added the VIP to its interface, in Unix seconds; 0 if never.", vipVars...),
		vipGo:         desc(NameVIPLastRemoved, "When this node last removed the VIP from its interface, in Unix seconds; 0 if never.", vipVars...),
		notifyRuns: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: NameNotifyRuns, ConstLabels: labels,
			Help: "Runs of a notify command, by command (the event it runs on, or state)."}, []string{LabelCommand}),
		notifyFailures: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: NameNotifyFailures, ConstLabels: labels,
			Help: "Runs of a notify command that did not start, exited non-zero or timed out."}, []string{LabelCommand}),
		notifyDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: NameNotifyDuration, ConstLabels: labels,
			Buckets: hookBuckets(), Help: "Time a notify command ran."}, []string{LabelCommand}),
	}, nil
}

// ObserveNotify counts one run of a notify command, and its failure.
func (c *AgentCollector) ObserveNotify(command string, took time.Duration, err error) {
	c.notifyRuns.WithLabelValues(command).Inc()
	c.notifyFailures.WithLabelValues(command).Add(0)
	if err != nil {
		c.notifyFailures.WithLabelValues(command).Inc()
	}
	c.notifyDuration.WithLabelValues(command).Observe(took.Seconds())
}

// Describe sends the descriptions of every series (prometheus.Collector).
func (c *AgentCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.checkPassing, c.checkDuration, c.vipHeld, c.vipAnnounced, c.vipAdded, c.vipGo} {
		ch <- d
	}
	c.notifyRuns.Describe(ch)
	c.notifyFailures.Describe(ch)
	c.notifyDuration.Describe(ch)
}

// Collect sends the current value of every series (prometheus.Collector):
// the checks and VIPs are read from the source now.
func (c *AgentCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.src.CheckStates() {
		ch <- prometheus.MustNewConstMetric(c.checkPassing, prometheus.GaugeValue, boolValue(s.Passing), s.Name)
		ch <- prometheus.MustNewConstMetric(c.checkDuration, prometheus.GaugeValue, s.Took.Seconds(), s.Name)
	}
	for _, v := range c.src.VIPStates() {
		ch <- prometheus.MustNewConstMetric(c.vipHeld, prometheus.GaugeValue, boolValue(v.Held), v.Address, v.Interface)
		ch <- prometheus.MustNewConstMetric(c.vipAnnounced, prometheus.CounterValue, float64(v.Announcements), v.Address, v.Interface)
		ch <- prometheus.MustNewConstMetric(c.vipAdded, prometheus.GaugeValue, unixSeconds(v.LastAdded), v.Address, v.Interface)
		ch <- prometheus.MustNewConstMetric(c.vipGo, prometheus.GaugeValue, unixSeconds(v.LastRemoved), v.Address, v.Interface)
	}
	c.notifyRuns.Collect(ch)
	c.notifyFailures.Collect(ch)
	c.notifyDuration.Collect(ch)
}

func unixSeconds(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixNano()) / 1e9
}
