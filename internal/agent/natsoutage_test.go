package agent

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// startTestAgent runs an in-process agent of one cluster on url.
func startLoggedAgent(t *testing.T, url, node string, priority int, logs *logBuffer) *Agent {
	t.Helper()
	cfg := &Config{Clusters: []Cluster{{Name: "outage", Election: Election{NodeID: node, LeaseTTL: Duration(time.Second), Priority: priority}}}}
	a, err := New(cfg, Options{Logger: slog.New(slog.NewTextHandler(logs, nil)),
		Connect: func(Cluster) (Endpoint, error) { return Endpoint{URLs: []string{url}}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	a.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		a.Stop(ctx)
	})
	return a
}

// TestNATSOutageIsLoggedOnceAndHealthzIsHonest: while the NATS server is
// down, each agent logs the loss once, and a follower's status (what
// /healthz serves) says it knows no leader and is not ready, naming the
// loss; once it is back each logs that once, with how long it was lost
// (issue 33, defect 4).
func TestNATSOutageIsLoggedOnceAndHealthzIsHonest(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	var logA, logB logBuffer
	a := startLoggedAgent(t, srv.URL(), "a", 100, &logA)
	natstest.WaitFor(t, 10*time.Second, func() bool { return a.Status()[0].Role == "PRIMARY" }, "a never led")
	b := startLoggedAgent(t, srv.URL(), "b", 0, &logB)
	natstest.WaitFor(t, 10*time.Second, func() bool { s := b.Status()[0]; return s.Running && s.Leader == "a" && s.Ready },
		"b never followed a: %+v", lazyStatus{b})

	srv.Shutdown()
	var st ClusterStatus
	natstest.WaitFor(t, 10*time.Second, func() bool { st = b.Status()[0]; return st.NATS == NATSLost },
		"b's status never said NATS is lost: %+v", lazyStatus{b})
	if st.Leader != "" || st.Ready || !strings.Contains(st.Reason, "NATS connection lost") {
		t.Errorf("b's status while NATS is lost: leader %q, ready %v, reason %q; want no leader, not ready, the loss named", st.Leader, st.Ready, st.Reason)
	}
	natstest.WaitFor(t, 10*time.Second, func() bool { return a.Status()[0].Role != "PRIMARY" }, "a still leads without NATS")
	if s := a.Status()[0]; s.Leader != "" || s.Ready {
		t.Errorf("a's status while NATS is lost: %+v", s)
	}

	srv.Restart(t)
	for name, logs := range map[string]*logBuffer{"a": &logA, "b": &logB} {
		natstest.WaitFor(t, 10*time.Second, func() bool { return logs.count("NATS connection back") > 0 }, "%s never logged NATS back", name)
		if n := logs.count("NATS connection lost"); n != 1 {
			t.Errorf("%s logged the loss %d times, want once:\n%s", name, n, logs)
		}
		if n := logs.countLines(`msg="NATS connection back"`, " after="); n != 1 {
			t.Errorf("%s logged NATS back %d times (with how long it was lost), want once:\n%s", name, n, logs)
		}
	}
	natstest.WaitFor(t, 10*time.Second, func() bool { st = b.Status()[0]; return st.NATS == NATSConnected && st.Leader != "" },
		"b's status after NATS came back: %+v", lazyStatus{b})
}

// lazyStatus formats as an agent's status when formatted.
type lazyStatus struct{ a *Agent }

func (l lazyStatus) String() string {
	var b strings.Builder
	for _, s := range l.a.Status() {
		b.WriteString(strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(
			strings.Join([]string{s.Cluster, s.Node, s.Role, "leader=" + s.Leader, s.Reason, s.NATS}, " "), "\n", " "), "  ", " ")))
	}
	return b.String()
}

// TestUnreachableNATSAtStartIsLoggedOnce: an agent started while no
// server answers says so once at WARN (the retries at DEBUG), and once
// when it reaches one, with how long it waited.
func TestUnreachableNATSAtStartIsLoggedOnce(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	url := srv.URL()
	srv.Shutdown()
	var logs logBuffer
	cfg := &Config{Clusters: []Cluster{{Name: "outage", Election: Election{NodeID: "a", LeaseTTL: Duration(time.Second)}}}}
	a, err := New(cfg, Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Connect: func(Cluster) (Endpoint, error) { return Endpoint{URLs: []string{url}}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	a.Start()
	defer a.Stop(t.Context())
	natstest.WaitFor(t, 4*retryConnect, func() bool { return logs.countLines("level=DEBUG", "still cannot reach NATS") >= 1 },
		"the agent did not try again: %s", &logs)
	srv.Restart(t)
	natstest.WaitFor(t, 10*time.Second, func() bool { return a.Status()[0].Running }, "never started: %s", &logs)
	// The line may follow the start the status shows (the pool logs it
	// after its dial returned, without its lock): wait for it, then count.
	natstest.WaitFor(t, 10*time.Second, func() bool { return logs.countLines("NATS reached", "after=") >= 1 },
		"no line says NATS was reached: %s", &logs)
	if n := logs.countLines("level=WARN", "cannot reach NATS"); n != 1 {
		t.Errorf("%d WARN lines say NATS cannot be reached, want 1:\n%s", n, &logs)
	}
	if n := logs.countLines("NATS reached", "after="); n != 1 {
		t.Errorf("%d lines say NATS was reached (with how long it took), want 1:\n%s", n, &logs)
	}
}
