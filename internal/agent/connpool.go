package agent

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/nats-io/nats.go"
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

func newConnPool(log *slog.Logger) *connPool {
	return &connPool{log: log, conns: map[string]*sharedConn{}}
}

// acquire returns the connection of key, dialling it with dial if nobody
// holds one that is open, and makes w (cluster's) follow its state. Every
// acquire that returns no error is matched by one release.
func (p *connPool) acquire(ctx context.Context, key, cluster string, w *natsWatch, dial dialFunc) (*sharedConn, *nats.Conn, error) {
	p.mu.Lock()
	c := p.conns[key]
	if c == nil {
		c = &sharedConn{key: key, events: newConnEvents(p.log)}
		p.conns[key] = c
	}
	c.users++
	c.events.join(w, cluster)
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
		nc, err := dial(ctx, c.events.options())
		p.mu.Lock()
		c.dialing, a.err = nil, err
		if err == nil {
			c.nc = nc
		}
		close(a.done)
		if err != nil {
			p.mu.Unlock()
			p.release(c, w)
			return nil, nil, err
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
