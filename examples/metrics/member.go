package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/health"
	"github.com/ozanturksever/go-cluster/metrics"
)

// settings are shared by every node of the program.
type settings struct {
	clusterID string
	urls      []string
	ttl       time.Duration
	logger    *slog.Logger
}

// member is one node with its health checker and metrics collector, on
// one shared connection.
type member struct {
	node    *cluster.Node
	checker *health.Checker
	metrics *metrics.Collector
	nc      *nats.Conn
}

func startMember(ctx context.Context, cfg settings, nodeID string) (*member, error) {
	nc, err := nats.Connect(strings.Join(cfg.urls, ","), nats.Name(nodeID), nats.MaxReconnects(-1))
	if err != nil {
		return nil, err
	}
	m := &member{nc: nc}
	if err := m.start(ctx, cfg, nodeID); err != nil {
		m.stop(cfg.logger)
		return nil, err
	}
	return m, nil
}

func (m *member) start(ctx context.Context, cfg settings, nodeID string) error {
	var err error
	if m.metrics, err = metrics.New(cfg.clusterID, nodeID); err != nil {
		return err
	}
	if m.checker, err = health.NewChecker(health.Config{ClusterID: cfg.clusterID, NodeID: nodeID, Conn: m.nc, Logger: cfg.logger}); err != nil {
		return err
	}
	adapter := health.NewAdapter(m.checker)
	node, err := cluster.NewNode(cluster.Config{
		ClusterID: cfg.clusterID, NodeID: nodeID, Conn: m.nc, Logger: cfg.logger,
		LeaseTTL: cfg.ttl, RenewInterval: cfg.ttl / 4,
		Metrics: m.metrics,
	}, cluster.ComposeHooks(announce(nodeID), adapter))
	if err != nil {
		return err
	}
	if err := adapter.Bind(node); err != nil {
		return err
	}
	if err := m.metrics.Bind(node); err != nil {
		return err
	}
	m.checker.SetCustom("pid", os.Getpid())
	if err := m.checker.Start(ctx); err != nil {
		return err
	}
	if err := node.Start(ctx); err != nil {
		return err
	}
	m.node = node
	return nil
}

func (m *member) stop(logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if m.node != nil {
		if err := m.node.Stop(ctx); err != nil {
			logger.Warn("node stop", "node", m.node.Config().NodeID, "error", err)
		}
	}
	if m.checker != nil {
		m.checker.Stop()
	}
	m.nc.Close()
}

// announce stands for the application's hooks: it prints leadership changes.
func announce(nodeID string) cluster.Hooks {
	return cluster.HookFuncs{
		BecomeLeader: func(context.Context) error {
			fmt.Printf("%s  %s: OnBecomeLeader\n", time.Now().Format("15:04:05.000"), nodeID)
			return nil
		},
		LoseLeadership: func(context.Context) error {
			fmt.Printf("%s  %s: OnLoseLeadership\n", time.Now().Format("15:04:05.000"), nodeID)
			return nil
		},
	}
}
