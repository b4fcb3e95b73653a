// Command vip keeps a virtual IP address on whichever host leads the
// cluster: run it on two or more Linux hosts on the same network segment,
// stop the leader, and the address moves, announced by gratuitous ARP (or
// an unsolicited neighbour advertisement for IPv6).
//
//	# on every host (NATS with JetStream reachable from all of them):
//	sudo go run ./examples/vip -nats nats://nats.example:4222 \
//	    -node "$(hostname)" -addr 10.0.0.100 -netmask 24 -iface eth0
//
// The server is that of -nats, default $NATS_URL; with neither it refuses
// to start (exit status 2) before it touches anything. It never starts a
// server of its own: two hosts each electing on their own server would
// both hold the address. Mind that sudo drops NATS_URL from the
// environment: give -nats, or use sudo -E. It needs CAP_NET_ADMIN and
// CAP_NET_RAW (root has both); see vip/README.md.
// Try it on one machine with network namespaces as "hosts": -netns
// /var/run/netns/NAME makes it manage the address inside that namespace
// while it talks to NATS from the current one.
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
	"github.com/ozanturksever/go-cluster/vip"
)

func main() {
	hostname, _ := os.Hostname()
	var (
		url       = flag.String("nats", os.Getenv("NATS_URL"), "NATS server URLs, comma-separated, the same on every host (default $NATS_URL; required)")
		clusterID = flag.String("cluster", "vip-demo", "cluster ID (shared by all hosts)")
		nodeID    = flag.String("node", hostname, "this node's ID (unique per host)")
		addr      = flag.String("addr", "", "virtual IP address, e.g. 10.0.0.100 or 2001:db8::100 (required)")
		netmask   = flag.Int("netmask", 24, "prefix length of the address")
		iface     = flag.String("iface", "eth0", "network interface to put the address on")
		netnsPath = flag.String("netns", "", "network namespace to manage the address in (path), default: this process's")
		refresh   = flag.Duration("refresh", 0, "re-announce the address this often while held (0: only on changes)")
		stepDown  = flag.Duration("step-down-after", 30*time.Second, "give up leadership if the address cannot be held for this long (0: never)")
		leaseTTL  = flag.Duration("lease-ttl", 3*time.Second, "lease TTL: how fast a crashed leader is replaced")
		debug     = flag.Bool("debug", false, "debug logging")
	)
	flag.Parse()
	if *url == "" {
		// Before anything else: no address, no lease, no server.
		fmt.Fprintln(os.Stderr, "vip: no NATS server: give -nats URLS or set NATS_URL (sudo drops NATS_URL: use sudo -E, or -nats); "+
			"every host must use the same server, and this program never starts one of its own: "+
			"hosts electing on servers of their own would each hold the VIP")
		os.Exit(2)
	}
	level := slog.LevelInfo
	if *debug {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{Level: level}))
	if err := run(logger, *url, *clusterID, *nodeID, vip.Config{
		Address:         *addr,
		Netmask:         *netmask,
		Interface:       *iface,
		NetNS:           *netnsPath,
		RefreshInterval: *refresh,
		Logger:          logger,
	}, *stepDown, *leaseTTL); err != nil {
		logger.Error("vip example failed", "err", err)
		os.Exit(1)
	}
}

func run(logger *slog.Logger, url, clusterID, nodeID string, cfg vip.Config, stepDownAfter, leaseTTL time.Duration) error {
	m, err := vip.NewManager(cfg)
	if errors.Is(err, vip.ErrUnsupported) {
		return errors.New("this example needs Linux")
	}
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// A VIP left here by a crash of a previous run must not linger: only
	// the leader may hold it.
	if err := m.Release(ctx); err != nil {
		return err // most likely a missing CAP_NET_ADMIN: the error says so
	}

	var node *cluster.Node
	var opts []vip.HooksOption
	if stepDownAfter > 0 {
		opts = append(opts, vip.WithStepDown(stepDownAfter, func(ctx context.Context) error { return node.StepDown(ctx) }))
	}
	app := cluster.HookFuncs{
		BecomeLeader: func(context.Context) error {
			logger.Info("leader: serving on the VIP", "vip", cfg.CIDR())
			return nil
		},
		LoseLeadership: func(context.Context) error {
			logger.Info("no longer leader: standing by")
			return nil
		},
		LeaderChange: func(_ context.Context, leader string) error {
			logger.Info("leader changed", "leader", leader)
			return nil
		},
	}
	node, err = cluster.NewNode(cluster.Config{
		ClusterID:     clusterID,
		NodeID:        nodeID,
		NATSURLs:      strings.Split(url, ","),
		LeaseTTL:      leaseTTL,
		RenewInterval: leaseTTL / 4,
		Logger:        logger,
	}, cluster.ComposeHooks(app, vip.NewHooks(m, opts...)))
	if err != nil {
		return err
	}
	if err := node.Start(ctx); err != nil {
		return err
	}
	logger.Info("running; Ctrl-C to stop", "node", nodeID, "vip", cfg.CIDR(), "interface", cfg.Interface)

	select {
	case <-ctx.Done():
	case <-node.Done():
		logger.Error("node stopped", "err", node.Err())
	}
	stopCtx, cancel := context.WithTimeout(context.Background(), 2*leaseTTL)
	defer cancel()
	return node.Stop(stopCtx) // releases the VIP, then the lease
}
