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
	e := newConnEvents(slog.New(slog.NewTextHandler(&logs, nil)))
	w := newNATSWatch()
	e.join(w, "web")
	start := time.Unix(1000, 0)
	now := start
	e.now = func() time.Time { return now }
	nc := &nats.Conn{Opts: nats.Options{PingInterval: time.Second, MaxPingsOut: 3}}
	now = start.Add(3 * time.Second) // noticed 3s after the last contact
	e.disconnected(nats.ErrStaleConnection, silence(nc, nats.ErrStaleConnection))
	if lost, since, _ := w.state(); !lost || !since.Equal(start) {
		t.Errorf("the member's watch: lost %v since %v, want lost since %v", lost, since, start)
	}
	now = start.Add(10 * time.Second)
	e.reconnected("nats://x")
	if !strings.Contains(logs.String(), "after=10s") {
		t.Fatalf("want the loss counted from the last contact, after=10s:\n%s", logs.String())
	}
	if lost, _, _ := w.state(); lost {
		t.Error("the member's watch still says lost after the connection came back")
	}
	if got := silence(nc, nats.ErrConnectionClosed); got != 0 {
		t.Errorf("silence of a closed socket %v, want 0", got)
	}
}
