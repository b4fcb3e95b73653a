package agent

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// TestNATSBackCountsFromLastContact: a connection found stale was last
// heard MaxPingsOut ping intervals before the loss was noticed, and
// "NATS connection back after=" counts from then. On main it counted from
// when the loss was noticed: 6.2s after a 10s outage (issue 41, item 9).
// (On main this test does not build: disconnected took no silence.)
func TestNATSBackCountsFromLastContact(t *testing.T) {
	var logs logBuffer
	w := newNATSWatch(slog.New(slog.NewTextHandler(&logs, nil)))
	start := time.Unix(1000, 0)
	now := start
	w.now = func() time.Time { return now }
	nc := &nats.Conn{Opts: nats.Options{PingInterval: time.Second, MaxPingsOut: 3}}
	now = start.Add(3 * time.Second) // noticed 3s after the last contact
	w.disconnected(nats.ErrStaleConnection, silence(nc, nats.ErrStaleConnection))
	now = start.Add(10 * time.Second)
	w.reconnected("nats://x")
	if !strings.Contains(logs.String(), "after=10s") {
		t.Fatalf("want the loss counted from the last contact, after=10s:\n%s", logs.String())
	}
	if got := silence(nc, nats.ErrConnectionClosed); got != 0 {
		t.Errorf("silence of a closed socket %v, want 0", got)
	}
}
