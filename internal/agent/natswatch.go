package agent

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// NATS connection states in ClusterStatus.NATS.
const (
	NATSConnected = "connected"
	NATSLost      = "lost"
)

// natsWatch follows a member's NATS connection through the connection's
// own callbacks: it logs a loss and a return once each, the return with
// how long the connection was lost, and tells status whether it is lost.
type natsWatch struct {
	log *slog.Logger
	now func() time.Time

	mu     sync.Mutex
	lost   bool
	since  time.Time // when the server was last heard, as far as known
	reason string
}

func newNATSWatch(log *slog.Logger) *natsWatch {
	return &natsWatch{log: log, now: time.Now}
}

// options are the connection options that feed w. nats.go calls them on
// its own goroutine, one at a time.
func (w *natsWatch) options() []nats.Option {
	return []nats.Option{
		nats.DisconnectErrHandler(func(nc *nats.Conn, err error) {
			// Close calls this too, with no error: a clean stop is no loss.
			if !nc.IsClosed() {
				w.disconnected(err, silence(nc, err))
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) { w.reconnected(nc.ConnectedUrlRedacted()) }),
	}
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
func (w *natsWatch) disconnected(err error, quiet time.Duration) {
	w.mu.Lock()
	first := !w.lost
	if first {
		w.lost, w.since, w.reason = true, w.now().Add(-quiet), "disconnected"
		if err != nil {
			w.reason = err.Error()
		}
	}
	w.mu.Unlock()
	if first {
		w.log.Warn("NATS connection lost: this node knows no leader until it is back; a leader gives up its VIPs at its tenure's deadline", "err", err, "silent_for", quiet)
	}
}

func (w *natsWatch) reconnected(server string) {
	w.mu.Lock()
	was, since := w.lost, w.since
	w.lost = false
	w.mu.Unlock()
	if was {
		w.log.Info("NATS connection back", "after", w.now().Sub(since).Round(time.Millisecond), "server", server)
	}
}

// state reports whether the connection is lost now, and if so since
// when and why.
func (w *natsWatch) state() (lost bool, since time.Time, reason string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lost, w.since, w.reason
}

// lostReason is status's reason while the connection is lost.
func (w *natsWatch) lostReason() string {
	_, since, reason := w.state()
	return fmt.Sprintf("NATS connection lost %s ago (%s): the leader is unknown", w.now().Sub(since).Round(time.Millisecond), reason)
}
