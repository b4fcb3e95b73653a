package metrics

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// Describe sends the descriptions of every series (prometheus.Collector).
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range c.eventSeries() {
		m.Describe(ch)
	}
	for _, d := range []*prometheus.Desc{c.isLeaderDesc, c.epochDesc, c.leaderKnownDesc, c.connectedDesc, c.connStateDesc, c.reconnDesc} {
		ch <- d
	}
}

// Collect sends the current value of every series (prometheus.Collector).
// The role, epoch and connection of a bound node are read now.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c.eventSeries() {
		m.Collect(ch)
	}
	leading, epoch, known := c.leading.Load(), c.epoch.Load(), c.leaderKnown.Load()
	n := c.node.Load()
	if n != nil {
		leading, epoch, known = n.IsLeader(), n.Epoch(), n.Leader() != ""
	}
	ch <- prometheus.MustNewConstMetric(c.isLeaderDesc, prometheus.GaugeValue, boolValue(leading))
	ch <- prometheus.MustNewConstMetric(c.epochDesc, prometheus.GaugeValue, float64(epoch))
	ch <- prometheus.MustNewConstMetric(c.leaderKnownDesc, prometheus.GaugeValue, boolValue(known))
	if n == nil {
		return
	}
	nc := n.Conn()
	if nc == nil {
		return // not started yet
	}
	state := strings.ToLower(nc.Status().String())
	ch <- prometheus.MustNewConstMetric(c.connectedDesc, prometheus.GaugeValue, boolValue(nc.IsConnected()))
	for _, s := range ConnectionStates() {
		ch <- prometheus.MustNewConstMetric(c.connStateDesc, prometheus.GaugeValue, boolValue(s == state), s)
	}
	ch <- prometheus.MustNewConstMetric(c.reconnDesc, prometheus.CounterValue, float64(nc.Stats().Reconnects))
}

// eventSeries are the series the cluster.Metrics methods update.
func (c *Collector) eventSeries() []prometheus.Collector {
	return []prometheus.Collector{
		c.transitions, c.leaderChanges, c.renewals, c.renewalLatency,
		c.electionWait, c.hookDuration, c.hookErrors, c.fencing, c.stateWrites,
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
