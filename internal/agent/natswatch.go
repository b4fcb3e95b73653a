package agent

import (
	"fmt"
	"sync"
	"time"
)

// NATS connection states in ClusterStatus.NATS.
const (
	NATSConnected = "connected"
	NATSLost      = "lost"
)

// natsWatch is what a member knows of its NATS connection: whether it is
// lost, since when and why, for status and /readyz. The connection's
// connEvents set it, and say the loss and the return in the log.
type natsWatch struct {
	now func() time.Time

	mu     sync.Mutex
	lost   bool
	since  time.Time // when the server was last heard, as far as known
	reason string
}

func newNATSWatch() *natsWatch {
	return &natsWatch{now: time.Now}
}

// set records the connection's state.
func (w *natsWatch) set(lost bool, since time.Time, reason string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lost, w.since, w.reason = lost, since, reason
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
