package agent

// The member's part in the agent's connection pool (connpool.go).

import (
	"context"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"
)

// connect takes the pool's connection of ep for the node (dialling it if
// no other member has), held until releaseConn. It is dialled with the
// election's timings, as the library would dial its own.
func (m *member) connect(ctx context.Context, ep Endpoint) (*nats.Conn, error) {
	cfg := m.config()
	timing, err := timingOf(cfg.Election)
	if err != nil {
		return nil, err
	}
	dial := func(ctx context.Context, handlers []nats.Option) (*nats.Conn, error) {
		return dialNATS(ctx, connName(cfg.Election.NodeID), ep, timing, handlers)
	}
	c, nc, err := m.conns.acquire(ctx, connRequest{key: connKey(ep, fmt.Sprintf("%p", m)), cluster: cfg.Name,
		servers: strings.Join(ep.URLs, ","), watch: m.nats, dial: dial})
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.conn = c
	m.mu.Unlock()
	return nc, nil
}

// releaseConn gives the member's connection back to the pool, if it holds
// one; the pool closes a connection nobody holds. The member no longer
// hears the connection's state: status says what it last heard.
func (m *member) releaseConn() {
	m.mu.Lock()
	c := m.conn
	m.conn = nil
	m.mu.Unlock()
	if c != nil {
		m.conns.release(c, m.nats)
	}
}
