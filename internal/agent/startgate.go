package agent

import (
	"sync"
	"time"
)

// repeatStartError is how often a start error that keeps coming back is
// logged again (with how many attempts it failed meanwhile).
const repeatStartError = 10 * time.Minute

// startGate decides which failed starts of a member are logged (and
// posted as a fault): the first, one with another error than the last,
// and a reminder every repeatStartError; the others are retries of what
// was said. A second agent with a running one's node ID is refused every
// retryConnect for as long as the other runs.
type startGate struct {
	mu       sync.Mutex
	last     string    // the error last logged; "" after a start
	loggedAt time.Time // when it was
	since    int       // attempts failed with it since it was logged
}

// failed records a failed start with err at now; say is true when it is
// to be logged, and repeats is how many attempts failed with the same
// error since it was last logged.
func (g *startGate) failed(err error, now time.Time) (say bool, repeats int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	msg := err.Error()
	if msg == g.last && now.Sub(g.loggedAt) < repeatStartError {
		g.since++
		return false, 0
	}
	repeats = 0
	if msg == g.last {
		repeats = g.since
	}
	g.last, g.loggedAt, g.since = msg, now, 0
	return true, repeats
}

// started forgets the last error: the next failure is news.
func (g *startGate) started() {
	g.mu.Lock()
	g.last, g.since = "", 0
	g.mu.Unlock()
}
