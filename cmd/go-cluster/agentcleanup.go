package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/ozanturksever/go-cluster/internal/agent"
)

// cleanupTimeout bounds `go-cluster agent --cleanup`.
const cleanupTimeout = 10 * time.Second

// cleanupVIPs is `go-cluster agent --cleanup`: every VIP of the file off
// this host, for systemd's ExecStopPost= after the agent exits, however it
// exits. Exit 1 if one could not be removed.
func cleanupVIPs(ctx context.Context, e *env, cfg *agent.Config) error {
	log := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ctx, cancel := context.WithTimeout(ctx, cleanupTimeout)
	defer cancel()
	if err := agent.Cleanup(ctx, cfg, log); err != nil {
		return fmt.Errorf("cleanup: %w", err)
	}
	return nil
}
