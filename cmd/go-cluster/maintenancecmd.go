package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/spf13/pflag"

	"github.com/ozanturksever/go-cluster/internal/agent"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// maintenanceCmd is `go-cluster maintenance on|off --node N`: it switches
// an agent's node in or out of maintenance (not ready: a leader steps
// down, a follower does not campaign).
type maintenanceCmd struct {
	node string
}

func (c *maintenanceCmd) define(fs *pflag.FlagSet) {
	fs.StringVar(&c.node, "node", "", "the agent's node `ID` (required)")
}

func (c *maintenanceCmd) run(ctx context.Context, e *env, args []string) error {
	if len(args) != 1 || args[0] != "on" && args[0] != "off" {
		return fmt.Errorf("%w: maintenance needs on or off: go-cluster maintenance on|off --cluster ID --node NODE", errUsage)
	}
	if c.node == "" {
		return fmt.Errorf("%w: maintenance needs --node", errUsage)
	}
	if err := wire.CheckNodeID("--node", c.node); err != nil {
		return badIdentifier(err)
	}
	nc, err := e.connect()
	if err != nil {
		return err
	}
	defer nc.Close()
	req, _ := json.Marshal(agent.MaintenanceRequest{On: args[0] == "on"})
	rctx, cancel := context.WithTimeout(ctx, e.opts.timeout)
	defer cancel()
	msg, err := nc.RequestWithContext(rctx, agent.MaintenanceSubject(e.opts.cluster, c.node), req)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return fmt.Errorf("%w: no agent runs node %q of cluster %q (only go-cluster agent answers maintenance requests)", errNoAnswer, c.node, e.opts.cluster)
	case err != nil:
		return fmt.Errorf("%w: node %q: %v", errNoAnswer, c.node, err)
	}
	var reply agent.MaintenanceReply
	if err := json.Unmarshal(msg.Data, &reply); err != nil {
		return fmt.Errorf("%w: %v", errBadReply, err)
	}
	if reply.Error != "" {
		return fmt.Errorf("%w: node %q: %s", errRefused, c.node, reply.Error)
	}
	if e.opts.json {
		return json.NewEncoder(e.stdout).Encode(reply)
	}
	state := "off"
	if reply.Maintenance {
		state = "on"
	}
	fmt.Fprintf(e.stdout, "node %s of cluster %s: maintenance %s", reply.Node, e.opts.cluster, state)
	if reply.File != "" {
		fmt.Fprintf(e.stdout, " (%s)", reply.File)
	}
	fmt.Fprintln(e.stdout)
	return nil
}
