// Command basic is the specification's usage example: one node of the
// cluster "my-cluster", logging its role changes until interrupted.
//
//	NODE_ID=node-1 NATS_URL=nats://localhost:4222 go run ./examples/basic
//
// Start several with different NODE_IDs against the same NATS server, stop
// the leader with Ctrl-C, and watch another take over.
package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
)

// MyApp is the application: it implements cluster.Hooks.
type MyApp struct {
	logger *slog.Logger
}

// OnBecomeLeader starts the primary's work; ctx ends with the tenure.
func (a *MyApp) OnBecomeLeader(ctx context.Context) error {
	a.logger.Info("I am now the LEADER!")
	return nil
}

// OnLoseLeadership stops the primary's work.
func (a *MyApp) OnLoseLeadership(ctx context.Context) error {
	a.logger.Info("I lost leadership, switching to standby")
	return nil
}

// OnLeaderChange reports who leads ("" when nobody does).
func (a *MyApp) OnLeaderChange(ctx context.Context, nodeID string) error {
	a.logger.Info("Leader changed", "leader", nodeID)
	return nil
}

func main() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, nil))
	app := &MyApp{logger: logger}
	url := os.Getenv("NATS_URL")
	if url == "" {
		url = "nats://localhost:4222"
	}
	node, err := cluster.NewNode(cluster.Config{
		ClusterID: "my-cluster",
		NodeID:    os.Getenv("NODE_ID"),
		NATSURLs:  []string{url},
		Logger:    logger,
	}, app)
	if err != nil {
		logger.Error("failed to create node", "error", err)
		os.Exit(1)
	}

	startCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := node.Start(startCtx); err != nil {
		logger.Error("failed to start node", "error", err)
		os.Exit(1)
	}

	sigCh := make(chan os.Signal, 1)
	signal.Notify(sigCh, syscall.SIGINT, syscall.SIGTERM)
	select {
	case <-sigCh:
	case <-node.Done():
		logger.Error("node stopped", "error", node.Err())
	}
	stopCtx, cancelStop := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancelStop()
	if err := node.Stop(stopCtx); err != nil {
		logger.Error("stop", "error", err)
	}
}
