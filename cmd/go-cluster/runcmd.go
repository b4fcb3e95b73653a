package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/runner"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// runCmd is `go-cluster run`: campaign, and run a command while leading.
type runCmd struct {
	node     string
	ttl      time.Duration
	grace    time.Duration
	once     bool
	priority int
	replicas int
	slots    int
	verbose  bool
	// startTimeout is --start-timeout: give up when the command has not
	// started within it; 0, not given.
	startTimeout time.Duration
}

// exitLeadTimeout is run's exit status when --start-timeout passed
// before the command started: GNU timeout's.
const exitLeadTimeout = 124

func (c *runCmd) define(fs *pflag.FlagSet) {
	fs.StringVar(&c.node, "node", "", "this node's `ID` in the election (default HOST-PID, so that runs on one host queue)")
	fs.DurationVar(&c.ttl, "ttl", wire.DefaultLeaseTTL, "the lease's TTL: how long after this host dies another takes over")
	fs.DurationVar(&c.grace, "grace", 0, "time between SIGTERM and SIGKILL when leadership ends (default and maximum: what --ttl allows)")
	fs.BoolVar(&c.once, "once", false, "exit after one run of the command, also when it was stopped because leadership was lost")
	fs.IntVar(&c.priority, "priority", 0, "preferred-leader priority: a higher one takes over from a lower one")
	fs.IntVar(&c.replicas, "replicas", 1, "replicas of the cluster's KV bucket when this node creates it")
	fs.IntVarP(&c.slots, "slots", "n", 1, "at most `N` commands of the cluster at once (a semaphore; every run of the cluster gives the same N)")
	fs.BoolVar(&c.verbose, "verbose", false, "log elections and the command's starts and stops to stderr")
	fs.DurationVar(&c.startTimeout, "start-timeout", 0, "give up (exit 124) if COMMAND has not started within `D` of run's start, counting the connection, "+
		"a new bucket's first election (its TTL ceiling less its age) and the wait for a leader or a slot (default: for ever)")
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
	nodeID, err := c.nodeID()
	if err != nil {
		return err
	}
	level := slog.LevelWarn
	if c.verbose {
		level = slog.LevelInfo
	}
	base := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level})) // the node adds its names
	log := base.With("cluster", e.opts.cluster, "node", nodeID)

	// Signals are the command's from here on: run ends when it does.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwardedSignals...)
	defer signal.Stop(sigs)
	ctx = context.WithoutCancel(ctx)

	natsOpts, err := e.conn.natsOptions()
	if err != nil {
		return err
	}
	if c.slots < 1 {
		return fmt.Errorf("%w: --slots must be at least 1, not %d", errUsage, c.slots)
	}
	if c.startTimeout < 0 {
		return fmt.Errorf("%w: --start-timeout must not be negative, not %v", errUsage, c.startTimeout)
	}
	// --start-timeout bounds the wait to lead only when given.
	leadTimeout := c.startTimeout
	// The node dials, and redials forever, with the library's settings;
	// never a server of its own.
	r, err := runner.New(runner.Config{
		Node: cluster.Config{ClusterID: e.opts.cluster, NodeID: nodeID, NATSURLs: strings.Split(e.conn.server, ","),
			NATSOptions: natsOpts, LeaseTTL: c.ttl, Priority: c.priority, Bucket: cluster.BucketOptions{Replicas: c.replicas}, Logger: base,
			JetStreamDomain: e.conn.jsDomain, JetStreamAPIPrefix: e.conn.jsAPI},
		Argv: args, Grace: c.grace, Once: c.once, Signals: sigs, Logger: log, Slots: c.slots, LeadTimeout: leadTimeout,
		Stdio: runner.Stdio{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr},
	})
	if err != nil {
		return fmt.Errorf("%w: %s", errUsage, strings.TrimPrefix(strings.TrimPrefix(err.Error(), cluster.ErrInvalidConfig.Error()+": "), runner.ErrConfig.Error()+": "))
	}
	code, err := r.Run(ctx)
	if err != nil {
		if errors.Is(err, runner.ErrLeadTimeout) {
			fmt.Fprintf(e.stderr, "go-cluster run: gave up (--start-timeout): %v\n", err)
			return exitStatus{exitLeadTimeout}
		}
		if errors.Is(err, cluster.ErrConnect) {
			return fmt.Errorf("%w at %s: %v", errConnect, e.conn.describe(), err)
		}
		return err
	}
	return exitStatus{code}
}

// nodeID is --node, or the host name and this process's ID: a node ID
// of its own for each run, so that two runs on one host queue as runs on
// two hosts do, while the host name still shows in logs and status.
func (c *runCmd) nodeID() (string, error) {
	if c.node != "" {
		if err := wire.CheckNodeID("--node", c.node); err != nil {
			return "", badIdentifier(err)
		}
		return c.node, nil
	}
	host, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("%w: cannot read the host name (%v): give --node", errUsage, err)
	}
	id := host + "-" + strconv.Itoa(os.Getpid())
	if err := wire.CheckNodeID("host name", id); err != nil {
		return "", fmt.Errorf("%w: the host name cannot begin the node ID (%s): give one with --node",
			errUsage, strings.TrimPrefix(err.Error(), cluster.ErrInvalidConfig.Error()+": "))
	}
	return id, nil
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
