// Command basic is the specification's usage example: one node of the
// cluster "my-cluster", logging its role changes until interrupted.
//
//	NODE_ID=node-1 NATS_URL=nats://localhost:4222 go run ./examples/basic
//	NODE_ID=node-1 go run ./examples/basic -nats nats://localhost:4222
//
// Start several with different NODE_IDs against the same NATS server, stop
// the leader with Ctrl-C, and watch another take over. With neither -nats
// nor NATS_URL it refuses to start (exit status 2): nodes each on a server
// of their own would each elect a leader. For a try on one machine,
// -embedded starts a NATS server in this process and says so, with its
// URL for the other nodes' -nats, in its first line of output:
//
//	NODE_ID=node-1 go run ./examples/basic -embedded
//	NODE_ID=node-2 go run ./examples/basic -nats nats://127.0.0.1:PORT
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/examples/embedded"
)

// MyApp is the application: it implements cluster.Hooks.
type MyApp struct {
	logger *slog.Logger
}

// OnBecomeLeader starts the leader's work; ctx ends with the tenure.
func (a *MyApp) OnBecomeLeader(ctx context.Context) error {
	a.logger.Info("I am now the LEADER!")
	return nil
}

// OnLoseLeadership stops the leader's work.
func (a *MyApp) OnLoseLeadership(ctx context.Context) error {
	a.logger.Info("I lost leadership, now a follower")
	return nil
}

// OnLeaderChange reports who leads ("" when nobody does).
func (a *MyApp) OnLeaderChange(ctx context.Context, nodeID string) error {
	a.logger.Info("Leader changed", "leader", nodeID)
	return nil
}

func main() {
	natsURL := flag.String("nats", os.Getenv("NATS_URL"), "NATS server URLs, comma-separated (default $NATS_URL)")
	startEmbedded := flag.Bool("embedded", false, "start a NATS server in this process, for a try on one machine (instead of -nats)")
	flag.Parse()
	if err := embedded.CheckServer(*natsURL, *startEmbedded); err != nil {
		fmt.Fprintln(os.Stderr, "basic:", err)
		os.Exit(2)
	}
	logger := slog.New(slog.NewTextHandler(os.Stdout, nil))
	if err := run(logger, *natsURL, os.Getenv("NODE_ID")); err != nil {
		logger.Error("basic example failed", "error", err)
		os.Exit(1)
	}
}

// run runs the node on the server of url; "" starts an embedded server.
func run(logger *slog.Logger, url, nodeID string) error {
	if url == "" {
		srv, err := embedded.Start()
		if err != nil {
			return err
		}
		defer srv.Close()
		url = srv.URL()
		logger.Info("-embedded: started an embedded NATS server in this process; run more nodes on this machine with -nats "+url, "url", url)
	}
	app := &MyApp{logger: logger}
	node, err := cluster.NewNode(cluster.Config{
		ClusterID: "my-cluster",
		NodeID:    nodeID,
		NATSURLs:  strings.Split(url, ","),
		Logger:    logger,
	}, app)
	if err != nil {
		return err
	}

	startCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := node.Start(startCtx); err != nil {
		return err
	}

	sigCh := make(chan os.Signal, 1)
	signal.Notify(sigCh, syscall.SIGINT, syscall.SIGTERM)
	var stopped error
	select {
	case <-sigCh:
	case <-node.Done():
		stopped = node.Err()
	}
	stopCtx, cancelStop := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancelStop()
	err = node.Stop(stopCtx)
	if errors.Is(err, cluster.ErrStopped) {
		err = nil // it had stopped by itself: stopped says why
	}
	return errors.Join(stopped, err)
}
