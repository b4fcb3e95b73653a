package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/agent"
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
	cleanup   bool   // remove the file's VIPs from this host and exit
	node      string // overrides every cluster's election.node_id
	listen    string // overrides the file's listen
	listening string // the listen address in use
}

// clusterFree marks a command that takes no --cluster: its clusters come
// from elsewhere.
type clusterFree interface{ takesNoCluster() }

func (*agentCmd) takesNoCluster() {}

func (c *agentCmd) define(fs *flag.FlagSet) {
	fs.StringVar(&c.config, "config", cmp.Or(os.Getenv(envAgentConfig), defaultAgentConfig), "the agent's configuration `FILE` (YAML) ($"+envAgentConfig+")")
	fs.BoolVar(&c.check, "check", false, "validate the file, print what is wrong, and exit: 0 if it is valid")
	fs.BoolVar(&c.cleanup, "cleanup", false, "remove every VIP of the file (addresses, copies, routes) from this host and exit: the unit's ExecStopPost=")
	fs.StringVar(&c.node, "node", os.Getenv(envAgentNode), "this host's node `ID` in every cluster, over the file's node_id ($"+envAgentNode+")")
	fs.StringVar(&c.listen, "listen", os.Getenv(envAgentListen), "`ADDR` of /metrics and /healthz, over the file's listen ($"+envAgentListen+")")
}

func (c *agentCmd) run(ctx context.Context, e *env, _ []string) error {
	cfg, err := c.load()
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
		return nil
	}
	return c.serve(ctx, e, cfg)
}

// errAgentConfig: the agent's configuration file is invalid.
var errAgentConfig = errors.New("invalid configuration")

// load reads the file and applies the flags that override it.
func (c *agentCmd) load() (*agent.Config, error) {
	if c.node != "" {
		if err := cluster.ValidateIdentifier("--node", c.node); err != nil {
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
