package agent

import (
	"context"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// TestCleanStopLogsNoNATSLoss: an agent stopped cleanly closes its NATS
// connection, which is no loss: it logs none. On main every clean stop
// logged a WARN "NATS connection lost ... err=<nil>" (issue 41, item 9).
func TestCleanStopLogsNoNATSLoss(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	var logs logBuffer
	a := startLoggedAgent(t, srv.URL(), "a", 0, &logs)
	natstest.WaitFor(t, 10*time.Second, func() bool { return a.Status()[0].Role == "PRIMARY" }, "a never led")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a.Stop(ctx)
	if n := logs.count("NATS connection lost"); n != 0 {
		t.Fatalf("a clean stop logged %d NATS losses:\n%s", n, logs.String())
	}
}
