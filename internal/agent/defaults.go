package agent

import "time"

// Defaults of the fields left out of a file.
const (
	DefaultCheckInterval  = 2 * time.Second
	DefaultCheckTimeout   = time.Second
	DefaultRise           = 2
	DefaultFall           = 3
	DefaultHTTPStatus     = 200
	DefaultGARPCount      = 3
	DefaultGARPInterval   = 200 * time.Millisecond
	DefaultGARPRefresh    = 60 * time.Second
	DefaultNotifyTimeout  = 30 * time.Second
	DefaultBackoffMin     = time.Second
	DefaultBackoffMax     = 30 * time.Second
	DefaultBucketReplicas = 1
)

// WithDefaults returns a copy of c with the defaults filled in, and the
// node ID of every cluster that has none set to hostname.
func (c Config) WithDefaults(hostname string) Config {
	out := c
	out.Clusters = make([]Cluster, len(c.Clusters))
	for i, cl := range c.Clusters {
		out.Clusters[i] = cl.withDefaults(hostname)
	}
	return out
}

func (cl Cluster) withDefaults(hostname string) Cluster {
	if cl.Election.NodeID == "" {
		cl.Election.NodeID = hostname
	}
	if cl.Election.Preempt == nil {
		yes := true
		cl.Election.Preempt = &yes
	}
	if cl.Election.Replicas == 0 {
		cl.Election.Replicas = DefaultBucketReplicas
	}
	cl.Checks = append([]Check(nil), cl.Checks...)
	for i := range cl.Checks {
		ch := &cl.Checks[i]
		ch.Interval = orDuration(ch.Interval, DefaultCheckInterval)
		ch.Timeout = orDuration(ch.Timeout, min(DefaultCheckTimeout, ch.Interval.D()))
		ch.Rise = orInt(ch.Rise, DefaultRise)
		ch.Fall = orInt(ch.Fall, DefaultFall)
		if ch.HTTP != nil {
			h := *ch.HTTP
			h.Status = orInt(h.Status, DefaultHTTPStatus)
			ch.HTTP = &h
		}
		if ch.File != nil && ch.File.Present == nil {
			f := *ch.File
			yes := true
			f.Present = &yes
			ch.File = &f
		}
	}
	cl.VIPs = append([]VIP(nil), cl.VIPs...)
	for i := range cl.VIPs {
		g := &cl.VIPs[i].GARP
		g.Count = orInt(g.Count, DefaultGARPCount)
		g.Interval = orDuration(g.Interval, DefaultGARPInterval)
		if g.Refresh == nil {
			r := Duration(DefaultGARPRefresh)
			g.Refresh = &r
		}
	}
	cl.Notify.Timeout = orDuration(cl.Notify.Timeout, DefaultNotifyTimeout)
	if cl.Service != nil {
		s := *cl.Service
		if s.OnExit == "" {
			s.OnExit = OnExitRestart
		}
		s.RestartBackoff.Min = orDuration(s.RestartBackoff.Min, DefaultBackoffMin)
		s.RestartBackoff.Max = orDuration(s.RestartBackoff.Max, max(DefaultBackoffMax, s.RestartBackoff.Min.D()))
		cl.Service = &s
	}
	return cl
}

func orDuration(d Duration, def time.Duration) Duration {
	if d == 0 {
		return Duration(def)
	}
	return d
}

func orInt(i, def int) int {
	if i == 0 {
		return def
	}
	return i
}
