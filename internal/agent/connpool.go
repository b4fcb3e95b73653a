package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	cluster "github.com/ozanturksever/go-cluster"
)

// connPool holds the agent's NATS connections: one per distinct
// connection setting, shared by every member whose settings resolve
// alike (a load balancer's fifty clusters make one socket, not fifty).
// The first member to need a connection dials it; the last to release it
// closes it.
type connPool struct {
	log *slog.Logger

	mu    sync.Mutex
	conns map[string]*sharedConn // by connection key (connKey)
	// down are the keys whose last dial failed, with when the first of
	// those failures was: an outage is logged once for the connection,
	// not once for each of its clusters.
	down map[string]time.Time
}

// sharedConn is one connection of the pool and the members using it.
type sharedConn struct {
	key    string
	events *connEvents
	users  int        // members holding it, dialling it included
	nc     *nats.Conn // nil until dialled
	// dialing is the dial under way, which members that need the
	// connection meanwhile wait for rather than dial again.
	dialing *dialAttempt
}

// dialAttempt is one dial of a shared connection; err is set before done
// is closed.
type dialAttempt struct {
	done chan struct{}
	err  error
}

// dialFunc dials a connection with the handlers given (the pool's, fed to
// the connection's connEvents), within ctx.
type dialFunc func(ctx context.Context, handlers []nats.Option) (*nats.Conn, error)

// connRequest is a member's request for a connection.
type connRequest struct {
	key     string // connKey
	cluster string // the member's, for the connection's log lines
	servers string // the servers dialled, for the log lines about reaching them
	watch   *natsWatch
	dial    dialFunc
}

func newConnPool(log *slog.Logger) *connPool {
	return &connPool{log: log, conns: map[string]*sharedConn{}, down: map[string]time.Time{}}
}

// acquire returns the connection of r.key, dialling it with r.dial if
// nobody holds one that is open, and makes r.watch follow its state. Every
// acquire that returns no error is matched by one release. It logs a
// connection that cannot be reached once, and once when it is reached.
func (p *connPool) acquire(ctx context.Context, r connRequest) (*sharedConn, *nats.Conn, error) {
	key, w := r.key, r.watch
	p.mu.Lock()
	c := p.conns[key]
	if c == nil {
		c = &sharedConn{key: key, events: newConnEvents(p.log)}
		p.conns[key] = c
	}
	c.users++
	c.events.join(w, r.cluster)
	for {
		// A connection nats.go closed (it gives up on an authorization
		// error that repeats) is dialled again.
		if c.nc != nil && !c.nc.IsClosed() {
			nc := c.nc
			p.mu.Unlock()
			return c, nc, nil
		}
		if a := c.dialing; a != nil {
			p.mu.Unlock()
			select {
			case <-a.done:
			case <-ctx.Done():
				p.release(c, w)
				return nil, nil, ctx.Err()
			}
			if a.err != nil {
				p.release(c, w)
				return nil, nil, a.err
			}
			p.mu.Lock()
			continue
		}
		a := &dialAttempt{done: make(chan struct{})}
		c.dialing = a
		p.mu.Unlock()
		nc, err := r.dial(ctx, c.events.options())
		p.mu.Lock()
		c.dialing, a.err = nil, err
		if err == nil {
			c.nc = nc
		}
		close(a.done)
		say := p.dialled(key, err, ctx.Err() != nil)
		p.mu.Unlock()
		say(p.log, r.servers)
		if err != nil {
			p.release(c, w)
			return nil, nil, err
		}
		return c, nc, nil
	}
}

// dialled records a dial's outcome for key, with p.mu, and returns what
// to log of it once p.mu is released: the first failure to reach NATS
// since it was last reached at WARN, the next ones at DEBUG, reaching it
// again at INFO with how long it took. A dial given up (stopped) says
// nothing.
func (p *connPool) dialled(key string, err error, stopped bool) func(log *slog.Logger, servers string) {
	now := time.Now()
	since, down := p.down[key]
	switch {
	case err == nil:
		delete(p.down, key)
		if !down {
			return func(*slog.Logger, string) {}
		}
		return func(log *slog.Logger, servers string) {
			log.Info("NATS reached", "servers", servers, "after", now.Sub(since).Round(time.Millisecond))
		}
	case stopped || !errors.Is(err, cluster.ErrConnect):
		return func(*slog.Logger, string) {} // the member says why it did not start
	case !down:
		p.down[key] = now
		return func(log *slog.Logger, servers string) {
			log.Warn("cannot reach NATS; trying again every "+retryConnect.String(), "servers", servers, "err", err)
		}
	default:
		return func(log *slog.Logger, servers string) {
			log.Debug("still cannot reach NATS", "servers", servers, "err", err, "since", since)
		}
	}
}

// release ends a member's use of c (w stops following it); the last use
// closes the connection.
func (p *connPool) release(c *sharedConn, w *natsWatch) {
	c.events.leave(w)
	p.mu.Lock()
	c.users--
	var nc *nats.Conn
	if c.users == 0 {
		delete(p.conns, c.key)
		nc = c.nc
	}
	p.mu.Unlock()
	if nc != nil {
		nc.Close()
	}
}

// open is how many connections the pool holds, dialled or not.
func (p *connPool) open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// connKey is what decides which members share a connection: the
// endpoint's Key; for an endpoint without one, its servers when it has no
// other options (nothing else can differ), else own, a key of the member
// alone (options that cannot be compared are not shared).
func connKey(ep Endpoint, own string) string {
	switch {
	case ep.Key != "":
		return "settings " + ep.Key
	case len(ep.Options) == 0:
		return "servers " + strings.Join(ep.URLs, ",")
	default:
		return fmt.Sprintf("member %s", own)
	}
}
