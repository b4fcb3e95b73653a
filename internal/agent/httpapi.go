package agent

import (
	"encoding/json"
	"net/http"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// newRegistry is the registry of an agent's /metrics: the Go runtime's
// and the process's series, and each cluster's (see package metrics).
func newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// ClusterStatus is what /healthz says of one cluster. Role is "PRIMARY"
// (the leader) or "PASSIVE" (a follower): cluster.Role's String, the
// specification's words, as the health replies carry it.
type ClusterStatus struct {
	Cluster string `json:"cluster"`
	Node    string `json:"node"`
	Running bool   `json:"running"` // the node has started and not stopped
	Role    string `json:"role"`
	Leader  string `json:"leader"`
	Epoch   int64  `json:"epoch"`
	Ready   bool   `json:"ready"`
	Reason  string `json:"reason,omitempty"` // why not ready, or why not running
	// Priority is the node's priority now: election.priority less the
	// weights of its failing weighted checks; 0 while VIPFailure is set.
	Priority int `json:"priority"`
	// VIPFailure is why this node's last tenure could not hold a VIP,
	// until it has held it since: meanwhile it takes the VIPs from no
	// leader, and leads only when nobody else does.
	VIPFailure string `json:"vip_failure,omitempty"`
	// NATS is the node's connection: NATSConnected or NATSLost; empty
	// before the node has started. While it is lost, a follower knows no
	// leader (Leader is empty) and is not ready.
	NATS string `json:"nats,omitempty"`
	// VIPs are the VIPs this node holds; FailingChecks its checks that
	// do not pass (no result yet included).
	VIPs          []string `json:"vips"`
	FailingChecks []string `json:"failing_checks"`
}

// Status reports every cluster, sorted by name.
func (a *Agent) Status() []ClusterStatus {
	a.mu.Lock()
	members := make([]*member, 0, len(a.members))
	for _, m := range a.members {
		members = append(members, m)
	}
	a.mu.Unlock()
	out := make([]ClusterStatus, 0, len(members))
	for _, m := range members {
		out = append(out, m.status())
	}
	slices.SortFunc(out, func(x, y ClusterStatus) int {
		if x.Cluster < y.Cluster {
			return -1
		}
		if x.Cluster > y.Cluster {
			return 1
		}
		return 0
	})
	return out
}

// status is the member's ClusterStatus.
func (m *member) status() ClusterStatus {
	cfg := m.config()
	s := ClusterStatus{Cluster: cfg.Name, Node: cfg.Election.NodeID, VIPs: orEmpty(m.heldVIPs()), FailingChecks: orEmpty(m.failingChecks())}
	s.Priority, _ = m.priorityNow()
	if err := m.vips.failed(); err != nil {
		s.VIPFailure = err.Error()
	}
	m.mu.Lock()
	node, started := m.node, m.started
	m.mu.Unlock()
	if node == nil || !started {
		s.Reason = "not connected to NATS yet"
		return s
	}
	select {
	case <-node.Done():
		s.Reason = "stopped"
		if err := node.Err(); err != nil {
			s.Reason = "stopped: " + err.Error()
		}
		return s
	default:
	}
	s.Running, s.NATS = true, NATSConnected
	s.Role, s.Leader, s.Epoch = node.Role().String(), node.Leader(), node.Epoch()
	if lost, _, _ := m.nats.state(); lost {
		// The node's view is the last it heard: a follower cannot know who
		// leads now, and a leader leads only until its tenure's deadline.
		s.NATS, s.Reason = NATSLost, m.nats.lostReason()
		if !node.IsLeader() {
			s.Leader = ""
		}
		return s
	}
	if err := node.Ready(); err != nil {
		s.Reason = err.Error()
	} else {
		s.Ready = true
	}
	return s
}

// Handler serves /metrics (Prometheus); /healthz: 200 when every
// cluster's node runs (leader or not, ready or not), 503 otherwise, with
// the clusters' status as JSON either way; and the probes /livez and
// /readyz, of every cluster together or of one (/livez/NAME,
// /readyz/NAME), with the library's meaning (see serveProbe).
func (a *Agent) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(a.registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /livez", a.serveProbe(probeLive))
	mux.HandleFunc("GET /readyz", a.serveProbe(probeReady))
	mux.HandleFunc("GET /livez/{cluster}", a.serveProbe(probeLive))
	mux.HandleFunc("GET /readyz/{cluster}", a.serveProbe(probeReady))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		st := a.Status()
		code := http.StatusOK
		for _, s := range st {
			if !s.Running {
				code = http.StatusServiceUnavailable
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(st)
	})
	return mux
}
