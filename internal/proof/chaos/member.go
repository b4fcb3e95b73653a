package chaos

import (
	"context"
	"fmt"
	"sync"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/faultproxy"
)

// member is one NodeID of the run. It owns one fault proxy per NATS
// server, so that its connection alone can be disturbed, and the Node
// currently running under its ID (a Node is used once: a restart makes a
// new one, a new generation).
type member struct {
	id      string
	proxies []*faultproxy.Proxy
	stall   gate
	r       *run
	ttl     time.Duration // this member's LeaseTTL (see Options.LongTTLNodes)
	renew   time.Duration // this member's RenewInterval

	mu      sync.Mutex
	node    *cluster.Node // nil while stopped
	gen     int
	stopped bool // stopped by the schedule (not failed on its own)
}

// urls are the member's proxy URLs, one per server.
func (m *member) urls() []string {
	out := make([]string, len(m.proxies))
	for i, p := range m.proxies {
		out[i] = p.URL()
	}
	return out
}

// current returns the running Node, or nil.
func (m *member) current() *cluster.Node {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.node
}

// instance names the current generation.
func (m *member) instance() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return fmt.Sprintf("%s#%d", m.id, m.gen)
}

// start makes and starts a new Node under the member's ID. It may run on
// any goroutine.
func (m *member) start() error {
	m.mu.Lock()
	m.gen++
	inst := fmt.Sprintf("%s#%d", m.id, m.gen)
	m.mu.Unlock()

	r := m.r
	cfg := cluster.Config{
		ClusterID:     r.opts.ClusterID,
		NodeID:        m.id,
		NATSURLs:      m.urls(),
		LeaseTTL:      m.ttl,
		RenewInterval: m.renew,
		Bucket:        cluster.BucketOptions{Replicas: 3},
		Logger:        r.opts.Logger.With("instance", inst),
	}
	var node *cluster.Node
	hooks := cluster.HookFuncs{
		BecomeLeader: func(ctx context.Context) error {
			m.stall.wait()
			ten := r.checker.Become(inst, ctx)
			// The epoch is read while the tenure is live: become publishes
			// it with the tenure, and only replaces it after cancelling ctx.
			if e := node.Epoch(); ctx.Err() == nil {
				r.checker.Claimed(ten, e)
			}
			r.writers.Add(2)
			go func() {
				defer r.writers.Done()
				r.write(node, inst, ten, ctx)
			}()
			go func() {
				defer r.writers.Done()
				r.writeState(node, inst, ctx)
			}()
			return nil
		},
		LoseLeadership: func(context.Context) error {
			m.stall.wait()
			r.checker.Lose(inst)
			return nil
		},
		LeaderChange: func(context.Context, string) error {
			m.stall.wait()
			return nil
		},
	}
	n, err := cluster.NewNode(cfg, hooks)
	if err != nil {
		return err
	}
	node = n
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := n.Start(ctx); err != nil {
		return fmt.Errorf("start %s: %w", inst, err)
	}
	m.mu.Lock()
	m.node, m.stopped = n, false
	m.mu.Unlock()
	return nil
}

// stop stops the current Node gracefully (a leader hands over).
func (m *member) stop() error {
	m.mu.Lock()
	n := m.node
	m.node, m.stopped = nil, true
	m.mu.Unlock()
	if n == nil {
		return nil
	}
	m.stall.open() // Stop waits for the hooks
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return n.Stop(ctx)
}

// crash closes the current Node's connection, as the death of its process
// would: no release, no goodbye. The Node sees its connection closed, stops
// on its own, and is then discarded.
func (m *member) crash() error {
	m.mu.Lock()
	n := m.node
	m.node, m.stopped = nil, true
	m.mu.Unlock()
	if n == nil {
		return nil
	}
	m.stall.open()
	if nc := n.Conn(); nc != nil {
		nc.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	select {
	case <-n.Done():
	case <-ctx.Done():
		return fmt.Errorf("%s did not stop after its connection closed", m.id)
	}
	return n.Stop(ctx)
}

// failed reports a Node that stopped on its own (Done closed, not by the
// schedule), and forgets it.
func (m *member) failed() (error, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.node == nil {
		return nil, false
	}
	select {
	case <-m.node.Done():
		err := m.node.Err()
		m.node, m.stopped = nil, true
		return err, true
	default:
		return nil, false
	}
}

// restore puts every proxy of the member back to forwarding.
func (m *member) restore() {
	for _, p := range m.proxies {
		p.Restore()
	}
}
