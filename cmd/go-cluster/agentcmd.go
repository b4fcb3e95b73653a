package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/ozanturksever/go-cluster/internal/agent"
)

// defaultAgentConfig is where the agent looks for its file, unless
// $GO_CLUSTER_CONFIG or --config says otherwise.
const (
	defaultAgentConfig = "/etc/go-cluster/agent.yaml"
	envAgentConfig     = "GO_CLUSTER_CONFIG"
)

// agentCmd is `go-cluster agent`: the daemon, configured by a YAML file.
type agentCmd struct {
	config string
	check  bool
	listen string // the listen address in use
}

// clusterFree marks a command that takes no --cluster: its clusters come
// from elsewhere.
type clusterFree interface{ takesNoCluster() }

func (*agentCmd) takesNoCluster() {}

func (c *agentCmd) define(fs *flag.FlagSet) {
	fs.StringVar(&c.config, "config", cmp.Or(os.Getenv(envAgentConfig), defaultAgentConfig), "the agent's configuration `FILE` (YAML) ($"+envAgentConfig+")")
	fs.BoolVar(&c.check, "check", false, "validate the file, print what is wrong, and exit: 0 if it is valid")
}

func (c *agentCmd) run(ctx context.Context, e *env, _ []string) error {
	cfg, err := agent.Load(c.config)
	if err != nil {
		var ce *agent.ConfigError
		if errors.As(err, &ce) {
			return fmt.Errorf("%w: %d problem(s):\n%v", errAgentConfig, len(ce.Problems), err)
		}
		return err
	}
	if c.check {
		fmt.Fprintf(e.stdout, "%s: valid (%d cluster(s))\n", c.config, len(cfg.Clusters))
		return nil
	}
	return c.serve(ctx, e, cfg)
}

// errAgentConfig: the agent's configuration file is invalid.
var errAgentConfig = errors.New("invalid configuration")
