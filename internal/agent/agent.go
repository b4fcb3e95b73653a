package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"reflect"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
)

// Options are what an Agent needs besides its file.
type Options struct {
	// Hostname is the node ID of clusters that set none.
	Hostname string
	// Connect returns how a cluster reaches NATS: the file's connection
	// merged with the command line's, the environment and the nats CLI
	// context. Clusters whose endpoints resolve alike (see Endpoint.Key)
	// share one connection.
	Connect func(Cluster) (Endpoint, error)
	// Logger receives the agent's logs. Default slog.Default().
	Logger *slog.Logger
	// Output receives the output of notify commands and services.
	// Default io.Discard.
	Output io.Writer
}

// Endpoint is how a cluster's node reaches NATS and its bucket.
type Endpoint struct {
	URLs    []string
	Options []nats.Option
	// Key stands for the resolved settings URLs and Options are made of
	// (servers, credentials, TLS, ...): clusters with the same Key share
	// one NATS connection, dialled by the agent. Empty: clusters share by
	// URLs when Options is empty, and otherwise do not share. It is only
	// compared; a hash keeps secrets out of it.
	Key string
	// JetStreamDomain or JetStreamAPIPrefix: for a node behind a leaf
	// node (cluster.Config's fields of the same names).
	JetStreamDomain, JetStreamAPIPrefix string
}

// Agent runs the clusters of a Config.
type Agent struct {
	opts     Options
	registry *prometheus.Registry

	// conns are the members' NATS connections, one per distinct Key.
	conns *connPool

	mu      sync.Mutex
	members map[string]*member
}

// New checks what cfg asks for against what this agent can do, builds
// the members, and starts nothing.
func New(cfg *Config, opts Options) (*Agent, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Output == nil {
		opts.Output = io.Discard
	}
	if opts.Connect == nil {
		return nil, errors.New("agent: Options.Connect is required")
	}
	a := &Agent{opts: opts, members: map[string]*member{}, registry: newRegistry(),
		conns: newConnPool(opts.Logger)}
	members, err := a.build(cfg)
	if err != nil {
		return nil, err
	}
	a.members = members
	for _, m := range members {
		a.registry.MustRegister(m.metrics, m.agentMetrics)
	}
	return a, nil
}

// build makes a member for every cluster of cfg (with defaults).
func (a *Agent) build(cfg *Config) (map[string]*member, error) {
	full := cfg.WithDefaults(a.opts.Hostname)
	out := map[string]*member{}
	for _, cl := range full.Clusters {
		m, err := newMember(cl, a.opts, a.conns)
		if err != nil {
			for _, b := range out {
				b.discard()
			}
			return nil, err
		}
		out[cl.Name] = m
	}
	return out, nil
}

// Start starts every member; each connects, and retries, on its own.
func (a *Agent) Start() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, m := range a.members {
		m.start()
	}
}

// Stop stops every member: each leader stops its service, removes its
// VIPs and releases its lease, so that another node takes over at once.
func (a *Agent) Stop(ctx context.Context) {
	a.mu.Lock()
	members := a.members
	a.members = map[string]*member{}
	a.mu.Unlock()
	var wg sync.WaitGroup
	for _, m := range members {
		wg.Go(func() {
			m.stop(ctx)
			a.registry.Unregister(m.metrics)
			a.registry.Unregister(m.agentMetrics)
		})
	}
	wg.Wait()
}

// Reload applies a new file; it must not run concurrently with itself
// or Stop. A cluster whose election, connection and
// service are unchanged keeps its node (no failover): its checks and
// notify commands are replaced, and VIPs added or removed are added or
// removed in place (see vipSet). A cluster that changed otherwise is
// restarted (it hands leadership over if it led); removed ones are
// stopped, new ones started. If a new or changed cluster cannot be built,
// nothing changes.
func (a *Agent) Reload(ctx context.Context, cfg *Config) error {
	full := cfg.WithDefaults(a.opts.Hostname)
	// Status is not held up meanwhile (the watchdog pings after it): the
	// work is done on a copy, and only Reload and Stop, both called by
	// the agent's main loop, change the members.
	a.mu.Lock()
	current := maps.Clone(a.members)
	a.mu.Unlock()
	built := map[string]*member{}
	kept := map[string]Cluster{}
	vipChanges := map[string]vipChange{}
	for _, cl := range full.Clusters {
		if m := current[cl.Name]; m != nil && sameElection(m.config(), cl) {
			c, err := m.vips.plan(cl.VIPs)
			if err != nil {
				for _, b := range built {
					b.discard()
				}
				return fmt.Errorf("cluster %s: %w", cl.Name, err)
			}
			kept[cl.Name], vipChanges[cl.Name] = cl, c
			continue
		}
		m, err := newMember(cl, a.opts, a.conns)
		if err != nil {
			for _, b := range built {
				b.discard()
			}
			return err
		}
		built[cl.Name] = m
	}
	next := map[string]*member{}
	for name, m := range current {
		if cl, ok := kept[name]; ok {
			m.setRuntime(cl)
			m.setVIPs(cl.VIPs, vipChanges[name])
			next[name] = m
			continue
		}
		a.opts.Logger.Warn("reload: stopping cluster: removed, or its election, connection or service changed", "cluster", name)
		m.stop(ctx)
		a.registry.Unregister(m.metrics)
		a.registry.Unregister(m.agentMetrics)
	}
	for name, m := range built {
		a.opts.Logger.Info("reload: starting cluster", "cluster", name)
		for _, c := range []prometheus.Collector{m.metrics, m.agentMetrics} {
			if err := a.registry.Register(c); err != nil {
				a.opts.Logger.Warn("reload: the cluster's metrics are not served", "cluster", name, "err", err)
			}
		}
		m.start()
		next[name] = m
	}
	a.mu.Lock()
	a.members = next
	a.mu.Unlock()
	return nil
}

// connName is the name in the server's connz of a connection the agent
// dials for a node: its node ID (normally the host's name, and the same
// for all the clusters sharing the connection).
func connName(nodeID string) string {
	return "go-cluster agent " + nodeID
}

// sameElection reports whether a and b differ at most in what a running
// member can change without a new node: checks, maintenance file, notify
// commands, VIPs.
func sameElection(a, b Cluster) bool {
	a.Checks, a.MaintenanceFile, a.Notify, a.VIPs = nil, "", Notify{}, nil
	b.Checks, b.MaintenanceFile, b.Notify, b.VIPs = nil, "", Notify{}, nil
	return reflect.DeepEqual(a, b)
}
