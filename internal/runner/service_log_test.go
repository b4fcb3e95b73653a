package runner

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// syncBuffer is a bytes.Buffer safe for a logger's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServiceLogsNameTheService: a Service's logs call what it runs "the
// service", never "the command" (that is go-cluster run's word). On main
// a service stopped at the end of leadership logged "leadership ended:
// stopping the command" (issue 41, item 9).
func TestServiceLogsNameTheService(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	var logs syncBuffer
	svc, err := NewService(ServiceConfig{Argv: []string{"sleep", "60"}, Grace: 100 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	n := startServiceNode(t, srv, "words", svc)
	natstest.WaitFor(t, 10*time.Second, func() bool { return strings.Contains(logs.String(), "service started") }, "the service never started:\n%s", &logs)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := n.StepDown(ctx); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 10*time.Second, func() bool { return strings.Contains(logs.String(), "leadership ended") }, "no log of the service's stop:\n%s", &logs)
	stop(t, n)
	if strings.Contains(logs.String(), "the command") {
		t.Fatalf("a service's logs say \"the command\":\n%s", logs.String())
	}
}
