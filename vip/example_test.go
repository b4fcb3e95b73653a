package vip_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"os"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/vip"
)

func ExampleConfig_CIDR() {
	cfg := vip.Config{Address: "10.0.0.100", Netmask: 24, Interface: "eth0"}
	fmt.Println(cfg.CIDR())
	// Output: 10.0.0.100/24
}

// A Manager on its own: add, check and remove the address. Needs Linux and
// CAP_NET_ADMIN + CAP_NET_RAW, so this example is compiled, not run.
func ExampleManager() {
	ctx := context.Background()
	m, err := vip.NewManager(vip.Config{Address: "10.0.0.100", Netmask: 24, Interface: "eth0"})
	if err != nil {
		log.Fatal(err)
	}
	switch err := m.Acquire(ctx); {
	case errors.Is(err, vip.ErrNeedNetAdmin), errors.Is(err, vip.ErrNeedNetRaw):
		log.Fatalf("missing capability: %v", err)
	case errors.Is(err, vip.ErrInterfaceNotFound):
		log.Fatalf("check Config.Interface: %v", err)
	case err != nil:
		log.Printf("held, but: %v", err)
	}
	held, err := m.IsAcquired(ctx)
	fmt.Println(held, err)
	if err := m.Release(ctx); err != nil {
		log.Fatal(err)
	}
}

// The leader of a cluster holds the VIP. This example is compiled, not run:
// it needs NATS, Linux and privileges.
func ExampleNewHooks() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, nil))
	m, err := vip.NewManager(vip.Config{
		Address:   "10.0.0.100",
		Netmask:   24,
		Interface: "eth0",
		Logger:    logger,
	})
	if err != nil {
		log.Fatal(err)
	}
	// Remove a VIP this host may have kept from before a crash.
	if err := m.Release(context.Background()); err != nil {
		log.Fatal(err)
	}

	var node *cluster.Node
	app := cluster.HookFuncs{
		BecomeLeader:   func(ctx context.Context) error { logger.Info("serving"); return nil },
		LoseLeadership: func(ctx context.Context) error { logger.Info("standing by"); return nil },
	}
	// app first: the application is ready before the VIP arrives and the
	// VIP is gone before the application stops.
	hooks := cluster.ComposeHooks(app, vip.NewHooks(m,
		// Give leadership away if this host cannot hold the VIP for 30s.
		vip.WithStepDown(30*time.Second, func(ctx context.Context) error { return node.StepDown(ctx) }),
	))
	node, err = cluster.NewNode(cluster.Config{
		ClusterID: "web",
		NodeID:    "node-1",
		NATSURLs:  []string{"nats://127.0.0.1:4222"},
		Logger:    logger,
	}, hooks)
	if err != nil {
		log.Fatal(err)
	}
	if err := node.Start(context.Background()); err != nil {
		log.Fatal(err)
	}
	defer node.Stop(context.Background())
}
