package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"os"

	"github.com/spf13/pflag"

	"github.com/ozanturksever/go-cluster/internal/agent"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// defaultAgentConfig is where the agent looks for its file, unless
// $GO_CLUSTER_CONFIG or --config says otherwise.
const (
	defaultAgentConfig = "/etc/go-cluster/agent.yaml"
	envAgentConfig     = "GO_CLUSTER_CONFIG"
	envAgentNode       = "GO_CLUSTER_NODE_ID"
	envAgentListen     = "GO_CLUSTER_LISTEN"
)

// agentCmd is `go-cluster agent`: the daemon, configured by a YAML file.
type agentCmd struct {
	config    string
	check     bool
	otherHost bool   // --check a file meant for another host: skip what depends on this one
	cleanup   bool   // remove the file's VIPs from this host and exit
	node      string // overrides every cluster's election.node_id
	listen    string // overrides the file's listen
	listening string // the listen address in use
}

// clusterFree marks a command that takes no --cluster: its clusters come
// from elsewhere.
type clusterFree interface{ takesNoCluster() }

func (*agentCmd) takesNoCluster() {}

// connectsPerCluster marks a command that makes its connections itself,
// resolved for each cluster of its file (agentConnection; clusters that
// resolve alike share one): the common connection
// (resolveConn) is not made for it, so that a nats context it does not
// use cannot fail it.
type connectsPerCluster interface{ connectsPerCluster() }

func (*agentCmd) connectsPerCluster() {}

func (c *agentCmd) define(fs *pflag.FlagSet) {
	fs.StringVar(&c.config, "config", cmp.Or(os.Getenv(envAgentConfig), defaultAgentConfig), "the agent's configuration `FILE` (YAML) ($"+envAgentConfig+")")
	fs.BoolVar(&c.check, "check", false, "validate the file as the agent would run it on this host, print what is wrong, and exit: 0 valid, 1 not, 2 bad flags")
	fs.BoolVar(&c.otherHost, "other-host", false, "with --check: the file is meant for another host; skip what depends on this one (interfaces, commands, host name, NATS context)")
	fs.BoolVar(&c.cleanup, "cleanup", false, "remove every VIP of the file (addresses, copies, routes) from this host and exit: the unit's ExecStopPost=")
	fs.StringVar(&c.node, "node", os.Getenv(envAgentNode), "this host's node `ID` in every cluster, over the file's node_id ($"+envAgentNode+")")
	fs.StringVar(&c.listen, "listen", os.Getenv(envAgentListen), "`ADDR` of /metrics and /healthz, over the file's listen ($"+envAgentListen+")")
}

func (c *agentCmd) run(ctx context.Context, e *env, _ []string) error {
	if c.otherHost && !c.check {
		return fmt.Errorf("%w: --other-host goes with --check", errUsage)
	}
	if c.cleanup && c.check {
		return fmt.Errorf("%w: --cleanup and --check do not go together", errUsage)
	}
	cfg, err := c.load()
	if err == nil && !c.cleanup { // the cleanup needs nothing of this host but its interfaces
		err = c.checkHere(cfg, e)
	}
	if err != nil {
		var ce *agent.ConfigError
		if errors.As(err, &ce) {
			return fmt.Errorf("%w: %d problem(s):\n%v", errAgentConfig, len(ce.Problems), err)
		}
		return err
	}
	if c.cleanup {
		return cleanupVIPs(ctx, e, cfg)
	}
	if c.check {
		fmt.Fprintf(e.stdout, "%s: valid (%d cluster(s))\n", c.config, len(cfg.Clusters))
		for _, w := range agent.Warnings(c.config, cfg) { // valid, probably not meant: exit 0 all the same
			fmt.Fprintf(e.stderr, "warning: %s\n", w)
		}
		return nil
	}
	return c.serve(ctx, e, cfg)
}

// checkHere checks cfg against this host as the agent meets it: the node
// ID of every cluster (the host name where node_id is not set), which the
// agent refuses to run without; with --check also what it would fail on
// later (CheckHost: interfaces, commands, connections). --other-host skips
// both.
func (c *agentCmd) checkHere(cfg *agent.Config, e *env) error {
	if c.otherHost {
		return nil
	}
	host, herr := os.Hostname()
	nodeErr := cfg.CheckNodeIDs(host, herr)
	if !c.check {
		return nodeErr
	}
	flags := e.opts.conn
	hostErr := cfg.CheckHost(func(cl agent.Cluster) (agent.Endpoint, error) {
		return agentConnection(flags, cl.Connection, e.getenv)
	})
	err := agent.JoinConfigErrors(nodeErr, hostErr)
	if hostErr != nil {
		err = fmt.Errorf("%w\n(a file meant for another host: go-cluster agent --check --other-host skips what depends on this one)", err)
	}
	return err
}

// errAgentConfig: the agent's configuration file is invalid.
var errAgentConfig = errors.New("invalid configuration")

// load reads the file and applies the flags that override it.
func (c *agentCmd) load() (*agent.Config, error) {
	if c.node != "" {
		if err := wire.CheckNodeID("--node", c.node); err != nil {
			return nil, badIdentifier(err)
		}
	}
	if c.listen != "" {
		if _, _, err := net.SplitHostPort(c.listen); err != nil {
			return nil, fmt.Errorf("%w: --listen %q: want HOST:PORT: %v", errUsage, c.listen, err)
		}
	}
	cfg, err := agent.Load(c.config)
	if err != nil {
		return nil, err
	}
	for i := range cfg.Clusters {
		if c.node != "" {
			cfg.Clusters[i].Election.NodeID = c.node
		}
	}
	if c.listen != "" {
		cfg.Listen = c.listen
	}
	return cfg, nil
}
