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

	"github.com/nats-io/nats.go"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/runner"
)

// runCmd is `go-cluster run`: campaign, and run a command while leading.
type runCmd struct {
	node     string
	ttl      time.Duration
	grace    time.Duration
	once     bool
	priority int
	replicas int
	verbose  bool
}

func (c *runCmd) define(fs *flag.FlagSet) {
	fs.StringVar(&c.node, "node", "", "this node's `ID` in the election (default the host name)")
	fs.DurationVar(&c.ttl, "ttl", cluster.DefaultLeaseTTL, "the lease's TTL: how long after this host dies another takes over")
	fs.DurationVar(&c.grace, "grace", 0, "time between SIGTERM and SIGKILL when leadership ends (default and maximum: what --ttl allows)")
	fs.BoolVar(&c.once, "once", false, "exit after one run of the command, also when it was stopped because leadership was lost")
	fs.IntVar(&c.priority, "priority", 0, "preferred-leader priority: a higher one takes over from a lower one")
	fs.IntVar(&c.replicas, "replicas", 1, "replicas of the cluster's KV bucket when this node creates it")
	fs.BoolVar(&c.verbose, "verbose", false, "log elections and the command's starts and stops to stderr")
}

// exitStatus is an exit status to return as it is, with nothing printed:
// the command's own.
type exitStatus struct{ code int }

func (s exitStatus) Error() string { return fmt.Sprintf("exit status %d", s.code) }

// forwardedSignals are passed on to the command.
var forwardedSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2}

func (c *runCmd) run(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: run needs a command: go-cluster run --cluster ID [flags] -- COMMAND [ARGS...]", errUsage)
	}
	if e.conn.jsDomain != "" || e.conn.jsAPI != "" {
		return fmt.Errorf("%w: run cannot use a JetStream domain or API prefix yet (the context sets %s)",
			errUnsupported, strings.TrimSpace(e.conn.jsDomain+" "+e.conn.jsAPI))
	}
	nodeID, err := c.nodeID()
	if err != nil {
		return err
	}
	level := slog.LevelWarn
	if c.verbose {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level})).With("cluster", e.opts.cluster, "node", nodeID)

	// Signals are the command's from here on: run ends when it does.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwardedSignals...)
	defer signal.Stop(sigs)
	ctx = context.WithoutCancel(ctx)

	nc, err := e.connectLongLived(nodeID, log, sigs)
	if err != nil {
		return err
	}
	defer nc.Close()
	r, err := runner.New(runner.Config{
		Node: cluster.Config{ClusterID: e.opts.cluster, NodeID: nodeID, Conn: nc, LeaseTTL: c.ttl,
			Priority: c.priority, BucketReplicas: c.replicas, Logger: log},
		Argv: args, Grace: c.grace, Once: c.once, Signals: sigs, Logger: log,
		Stdio: runner.Stdio{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr},
	})
	if err != nil {
		return fmt.Errorf("%w: %s", errUsage, strings.TrimPrefix(strings.TrimPrefix(err.Error(), cluster.ErrInvalidConfig.Error()+": "), runner.ErrConfig.Error()+": "))
	}
	code, err := r.Run(ctx)
	if err != nil {
		return err
	}
	return exitStatus{code}
}

// nodeID is --node, or the host name.
func (c *runCmd) nodeID() (string, error) {
	if c.node != "" {
		if err := cluster.ValidateIdentifier("--node", c.node); err != nil {
			return "", badIdentifier(err)
		}
		return c.node, nil
	}
	host, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("%w: cannot read the host name (%v): give --node", errUsage, err)
	}
	if err := cluster.ValidateIdentifier("host name", host); err != nil {
		return "", fmt.Errorf("%w: the host name cannot be the node ID (%s): give one with --node",
			errUsage, strings.TrimPrefix(err.Error(), cluster.ErrInvalidConfig.Error()+": "))
	}
	return host, nil
}

// connectLongLived dials NATS for a node that runs until stopped: it
// reconnects forever, and the first connection is retried, with a message,
// until it succeeds or a terminating signal arrives. It never starts a
// server of its own.
func (e *env) connectLongLived(name string, log *slog.Logger, sigs <-chan os.Signal) (*nats.Conn, error) {
	opts, err := e.conn.natsOptions()
	if err != nil {
		return nil, err
	}
	opts = append(opts, nats.Name("go-cluster run "+name), nats.Timeout(e.opts.timeout), nats.MaxReconnects(-1),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) { log.Warn("disconnected from NATS", "err", err) }),
		nats.ReconnectHandler(func(nc *nats.Conn) { log.Warn("reconnected to NATS", "server", nc.ConnectedUrlRedacted()) }))
	const retry = 2 * time.Second
	for {
		nc, err := nats.Connect(e.conn.server, opts...)
		if err == nil {
			return nc, nil
		}
		log.Warn("cannot connect to NATS; retrying", "server", e.conn.describe(), "err", err, "in", retry)
		select {
		case sig := <-sigs:
			if s, ok := sig.(syscall.Signal); ok && s != syscall.SIGUSR1 && s != syscall.SIGUSR2 {
				return nil, exitStatus{128 + int(s)}
			}
		case <-time.After(retry):
		}
	}
}

// passThrough returns the exit status err carries as it is, if it does.
func passThrough(err error) (int, bool) {
	var s exitStatus
	if errors.As(err, &s) {
		return s.code, true
	}
	return 0, false
}

// maxRunArgs bounds the command line run passes on: no bound.
const maxRunArgs = 1 << 20
