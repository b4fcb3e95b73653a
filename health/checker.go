package health

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// flushTimeout bounds the round trip that makes sure the server knows the
// Checker's subscriptions, when Start's ctx has no deadline.
const flushTimeout = 5 * time.Second

type status int

const (
	statusNew status = iota
	statusRunning
	statusStopped
)

// Checker answers health requests for one node of a cluster, and asks other
// nodes. It answers on NodeSubject(ClusterID, NodeID), and on
// ClusterSubject(ClusterID) so that a cluster-wide query reaches it.
//
// Role and leader are set with SetRole and SetLeader, or kept in step with a
// cluster.Node by an Adapter. All methods are safe for concurrent use.
type Checker struct {
	cfg   Config
	log   *slog.Logger
	state *state

	mu       sync.RWMutex // guards the fields below; handlers hold it for reading
	status   status
	nc       *nats.Conn
	ownConn  bool
	subs     []*nats.Subscription
	client   *Client
	inflight sync.WaitGroup // requests being answered
}

// NewChecker returns a Checker for cfg; it answers nothing until Start.
// The role is "PASSIVE" (a follower) and the leader empty until set. The error wraps
// ErrInvalidConfig and names the field.
func NewChecker(cfg Config) (*Checker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	return &Checker{
		cfg:   cfg,
		log:   cfg.Logger.With("component", "health", "cluster", cfg.ClusterID, "node", cfg.NodeID),
		state: newState(),
	}, nil
}

// NodeID returns the NodeID the Checker answers for.
func (c *Checker) NodeID() string { return c.cfg.NodeID }

// ClusterID returns the ClusterID of the Checker.
func (c *Checker) ClusterID() string { return c.cfg.ClusterID }

// Start connects (unless Config.Conn is set) and subscribes. When it
// returns nil the NATS server knows the subscriptions: a request sent from
// then on is answered. A Checker starts once: ErrAlreadyStarted if it is
// running, ErrStopped after Stop.
func (c *Checker) Start(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch c.status {
	case statusRunning:
		return fmt.Errorf("health: start %s/%s: %w", c.cfg.ClusterID, c.cfg.NodeID, ErrAlreadyStarted)
	case statusStopped:
		return fmt.Errorf("health: start %s/%s: %w", c.cfg.ClusterID, c.cfg.NodeID, ErrStopped)
	}

	nc, own := c.cfg.Conn, false
	if nc == nil {
		var err error
		if nc, err = dial(ctx, c.cfg); err != nil {
			return fmt.Errorf("health: start %s/%s: %w", c.cfg.ClusterID, c.cfg.NodeID, err)
		}
		own = true
	}
	subs, err := c.subscribe(ctx, nc)
	if err != nil {
		if own {
			nc.Close()
		}
		return err
	}

	c.status, c.nc, c.ownConn, c.subs = statusRunning, nc, own, subs
	c.client = newClient(nc, c.cfg.ClusterID, c.log)
	c.state.setStarted(time.Now())
	c.log.Info("health checker started",
		"subject", NodeSubject(c.cfg.ClusterID, c.cfg.NodeID),
		"cluster_subject", ClusterSubject(c.cfg.ClusterID))
	return nil
}

// subscribe subscribes to the node and cluster subjects and waits until the
// server has them.
func (c *Checker) subscribe(ctx context.Context, nc *nats.Conn) ([]*nats.Subscription, error) {
	var subs []*nats.Subscription
	fail := func(err error) ([]*nats.Subscription, error) {
		for _, s := range subs {
			_ = s.Unsubscribe()
		}
		return nil, err
	}
	for _, subj := range []string{NodeSubject(c.cfg.ClusterID, c.cfg.NodeID), ClusterSubject(c.cfg.ClusterID)} {
		s, err := nc.Subscribe(subj, c.handle)
		if err != nil {
			return fail(fmt.Errorf("health: subscribe %s: %w", subj, err))
		}
		subs = append(subs, s)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, flushTimeout)
		defer cancel()
	}
	if err := nc.FlushWithContext(ctx); err != nil {
		return fail(fmt.Errorf("health: register subscriptions: %w", err))
	}
	return subs, nil
}

// Stop unsubscribes and, if the Checker dialled its own connection, closes
// it. When Stop returns no request is being answered and none will be. A
// shared Config.Conn is left open. Stop is idempotent; a stopped Checker
// cannot be started again.
func (c *Checker) Stop() {
	c.mu.Lock()
	if c.status == statusStopped {
		c.mu.Unlock()
		return
	}
	wasRunning := c.status == statusRunning
	c.status = statusStopped
	subs, nc, own := c.subs, c.nc, c.ownConn
	c.subs = nil
	c.mu.Unlock()

	if !wasRunning {
		return
	}
	for _, s := range subs {
		if err := s.Unsubscribe(); err != nil && !errors.Is(err, nats.ErrConnectionClosed) && !errors.Is(err, nats.ErrBadSubscription) {
			c.log.Warn("health: unsubscribe failed", "subject", s.Subject, "error", err)
		}
	}
	c.inflight.Wait()
	if own {
		nc.Close()
	}
	c.log.Info("health checker stopped")
}

// SetRole sets the role reported to queries, e.g. "PRIMARY" (the leader) or
// "PASSIVE" (a follower), cluster.Role's String values.
// An application that uses an Adapter does not call it.
func (c *Checker) SetRole(role string) { c.state.setRole(role) }

// SetLeader sets the leader's NodeID reported to queries; "" when nobody
// leads. An application that uses an Adapter does not call it.
func (c *Checker) SetLeader(leader string) { c.state.setLeader(leader) }

// SetCustom sets an application value reported under "custom" in every
// response; a nil value removes the key. It is safe to call while queries
// are answered. The Checker keeps value as given (a shallow copy of the map
// is encoded per response), so do not mutate a map, slice or pointer after
// passing it: set a new value instead. A value that cannot be encoded as
// JSON (a channel, a function, NaN, ...) makes the node answer with an
// error reply until it is replaced or removed.
func (c *Checker) SetCustom(key string, value any) { c.state.setCustom(key, value) }

// SetEpochFunc sets where the epoch of each response comes from: fn is
// called once per request (so it must be fast and safe for concurrent
// use); nil removes it. Adapter.Bind calls it with the node's Epoch method.
func (c *Checker) SetEpochFunc(fn func() int64) { c.state.setEpochFunc(fn) }

// SetReadyFunc sets where the NotReady of each response comes from: fn is
// called once per request (so it must be fast and safe for concurrent use),
// and a non-nil error's text is reported as NotReady; nil removes it (the
// node then reads as ready). Adapter.Bind calls it with the node's Ready
// method; an application with a Checker but no cluster.Node can report its
// own readiness this way.
func (c *Checker) SetReadyFunc(fn func() error) { c.state.setReadyFunc(fn) }

// Response returns the response the Checker would send now. Error is set
// when a custom value cannot be encoded as JSON.
func (c *Checker) Response() Response {
	r, _, _ := c.build()
	return r
}

// QueryNode asks node nodeID of this Checker's cluster for its health; see
// Client.QueryNode. ErrNotStarted before Start, ErrStopped after Stop.
func (c *Checker) QueryNode(ctx context.Context, nodeID string, timeout time.Duration) (Response, error) {
	cl, err := c.currentClient()
	if err != nil {
		return Response{}, err
	}
	return cl.QueryNode(ctx, nodeID, timeout)
}

// QueryCluster asks every node of this Checker's cluster, itself included;
// see Client.QueryCluster.
func (c *Checker) QueryCluster(ctx context.Context, timeout time.Duration) ([]Response, error) {
	cl, err := c.currentClient()
	if err != nil {
		return nil, err
	}
	return cl.QueryCluster(ctx, timeout)
}

// QueryClusterN asks every node of this Checker's cluster and returns as
// soon as n have answered; see Client.QueryClusterN.
func (c *Checker) QueryClusterN(ctx context.Context, n int, timeout time.Duration) ([]Response, error) {
	cl, err := c.currentClient()
	if err != nil {
		return nil, err
	}
	return cl.QueryClusterN(ctx, n, timeout)
}

func (c *Checker) currentClient() (*Client, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	switch c.status {
	case statusNew:
		return nil, fmt.Errorf("health: query: %w", ErrNotStarted)
	case statusStopped:
		return nil, fmt.Errorf("health: query: %w", ErrStopped)
	}
	return c.client, nil
}
