package agent

// The online clock: time that passes only while the node is connected to
// NATS (and a grace after each reconnect). A peer's standing ages, and a
// node's wait for a peer runs, on it: a node cut off from NATS hears
// nobody, and its silence says nothing about its peers. Without it a
// NATS outage longer than lease_ttl/2 made every peer look dead, and the
// node of lower priority took the lease its peer of higher priority gave
// back when NATS returned.

import (
	"sync"
	"time"
)

// onlineClock reads wall time less the time spent offline.
type onlineClock struct {
	grace time.Duration // counted as offline after a reconnect: the peers' time to be heard again

	mu      sync.Mutex
	offline time.Duration // offline periods that have ended
	downAt  time.Time     // start of the offline period under way; zero when none
	upAt    time.Time     // its end (reconnect + grace); zero while still disconnected
}

// disconnected records the connection lost at wall.
func (c *onlineClock) disconnected(wall time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fold(wall)
	if c.downAt.IsZero() {
		c.downAt = wall
	}
	c.upAt = time.Time{} // lost again within a grace: the period goes on
}

// connected records the connection back at wall.
func (c *onlineClock) connected(wall time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.downAt.IsZero() && c.upAt.IsZero() {
		c.upAt = wall.Add(c.grace)
	}
}

// now is the online time at wall, as a time.Time that only runs while
// online: compare it only with other readings of the same clock.
func (c *onlineClock) now(wall time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fold(wall)
	off := c.offline
	if !c.downAt.IsZero() {
		end := wall
		if !c.upAt.IsZero() && c.upAt.Before(end) {
			end = c.upAt
		}
		off += max(end.Sub(c.downAt), 0)
	}
	return wall.Add(-off)
}

// fold ends the offline period whose grace is over by wall.
func (c *onlineClock) fold(wall time.Time) {
	if !c.downAt.IsZero() && !c.upAt.IsZero() && !wall.Before(c.upAt) {
		c.offline += c.upAt.Sub(c.downAt)
		c.downAt, c.upAt = time.Time{}, time.Time{}
	}
}
