package agent

import (
	"errors"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// connEvents follows one NATS connection through its callbacks (nats.go
// takes one handler of each kind per connection) and fans what it hears
// out to the natsWatch of every member using the connection. It logs a
// loss and a return once for the connection, naming its clusters, the
// return with how long the connection was lost.
type connEvents struct {
	log *slog.Logger
	now func() time.Time

	mu      sync.Mutex
	watches map[*natsWatch]string // -> the member's cluster
	lost    bool
	since   time.Time // when the server was last heard, as far as known
	reason  string
}

func newConnEvents(log *slog.Logger) *connEvents {
	return &connEvents{log: log, now: time.Now, watches: map[*natsWatch]string{}}
}

// options are the connection options that feed e. nats.go calls them on
// its own goroutine, one at a time.
func (e *connEvents) options() []nats.Option {
	return []nats.Option{
		nats.DisconnectErrHandler(func(nc *nats.Conn, err error) {
			// Close calls this too, with no error: a clean stop is no loss.
			if !nc.IsClosed() {
				e.disconnected(err, silence(nc, err))
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) { e.reconnected(nc.ConnectedUrlRedacted()) }),
	}
}

// join makes w follow the connection, from its state now.
func (e *connEvents) join(w *natsWatch, cluster string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.watches[w] = cluster
	w.set(e.lost, e.since, e.reason)
}

// leave stops w following the connection.
func (e *connEvents) leave(w *natsWatch) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.watches, w)
}

// silence is how long before a loss is noticed the server was last
// heard at least: a connection found stale has had MaxPingsOut pings
// sent a PingInterval apart go unanswered; a closed socket is noticed at
// once.
func silence(nc *nats.Conn, err error) time.Duration {
	if errors.Is(err, nats.ErrStaleConnection) {
		return time.Duration(nc.Opts.MaxPingsOut) * nc.Opts.PingInterval
	}
	return 0
}

// disconnected records a loss noticed now, the server last heard quiet
// before: the loss counts from then.
func (e *connEvents) disconnected(err error, quiet time.Duration) {
	e.mu.Lock()
	first := !e.lost
	if first {
		e.lost, e.since, e.reason = true, e.now().Add(-quiet), "disconnected"
		if err != nil {
			e.reason = err.Error()
		}
		for w := range e.watches {
			w.set(true, e.since, e.reason)
		}
	}
	log := e.logger()
	e.mu.Unlock()
	if first {
		log.Warn("NATS connection lost: this node knows no leader until it is back; a leader gives up its VIPs at its tenure's deadline", "err", err, "silent_for", quiet)
	}
}

func (e *connEvents) reconnected(server string) {
	e.mu.Lock()
	was, since := e.lost, e.since
	e.lost = false
	for w := range e.watches {
		w.set(false, time.Time{}, "")
	}
	log := e.logger()
	e.mu.Unlock()
	if was {
		log.Info("NATS connection back", "after", e.now().Sub(since).Round(time.Millisecond), "server", server)
	}
}

// logger names the clusters on the connection: "cluster" when there is
// one, as a member's own lines do, else "clusters", sorted. With e.mu.
func (e *connEvents) logger() *slog.Logger {
	names := slices.Sorted(maps.Values(e.watches))
	if len(names) == 1 {
		return e.log.With("cluster", names[0])
	}
	return e.log.With("clusters", strings.Join(names, ","))
}
