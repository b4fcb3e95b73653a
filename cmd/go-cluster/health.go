package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/pflag"

	"github.com/ozanturksever/go-cluster/health"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// healthCmd queries one node's health, or every node's.
type healthCmd struct {
	settle time.Duration
}

func (c *healthCmd) define(fs *pflag.FlagSet) { defineSettle(fs, &c.settle) }

func (c *healthCmd) run(ctx context.Context, e *env, args []string) error {
	if c.settle < 0 {
		return fmt.Errorf("%w: --settle must not be negative", errUsage)
	}
	if len(args) == 1 {
		if err := wire.CheckNodeID("NODE", args[0]); err != nil {
			return badIdentifier(err)
		}
	}
	done := e.waiting("connecting to " + e.conn.server)
	nc, err := e.connect()
	done()
	if err != nil {
		return err
	}
	defer nc.Close()
	client, err := health.NewClient(nc, e.opts.cluster)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	var resps []health.Response
	var out any
	if len(args) == 1 {
		done := e.waiting("waiting for " + args[0] + "'s reply")
		r, err := client.QueryNode(ctx, args[0], e.opts.timeout)
		done()
		if err != nil && !errors.Is(err, health.ErrRemote) {
			return e.explainHealthError(ctx, nc, args[0], err)
		}
		resps, out = []health.Response{r}, r
	} else {
		// The members known are the leaders the replies name.
		g := gathering{nc: nc, clusterID: e.opts.cluster, timeout: e.opts.timeout, settle: c.settle}
		done := e.waiting("waiting for the members' replies on " + health.ClusterSubject(e.opts.cluster))
		rs, err := g.run(ctx)
		done()
		if err != nil {
			return e.explainHealthError(ctx, nc, "", err)
		}
		resps, out = rs, rs
	}
	if e.opts.json {
		err = writeJSON(e.stdout, out)
	} else {
		err = renderHealth(e.stdout, resps)
	}
	if err != nil {
		return err
	}
	for _, r := range resps {
		if r.Error != "" {
			return fmt.Errorf("%w: %s: %s", errUnhealthy, r.NodeID, r.Error)
		}
	}
	return nil
}

// explainHealthError turns a failed query of node ("" for every node)
// into a clear error: when nobody answers, it says whether the cluster
// exists at all.
func (e *env) explainHealthError(ctx context.Context, nc *nats.Conn, node string, err error) error {
	subject, who := health.ClusterSubject(e.opts.cluster), "no node of cluster "+e.opts.cluster
	if node != "" {
		subject, who = health.NodeSubject(e.opts.cluster, node), fmt.Sprintf("node %q of cluster %s", node, e.opts.cluster)
	}
	switch {
	case errors.Is(err, health.ErrNoResponders):
		if _, berr := e.openBucket(ctx, nc); errors.Is(berr, errNoCluster) {
			return berr
		}
		if node == "" {
			return fmt.Errorf("%w: %s answers health queries on %s", errNoAnswer, who, subject)
		}
		return fmt.Errorf("%w: %s does not answer on %s (not running, or no such node)", errNoAnswer, who, subject)
	case errors.Is(err, health.ErrTimeout):
		if node == "" {
			who = "the nodes of cluster " + e.opts.cluster
		}
		return fmt.Errorf("%w: %s did not answer on %s within %v", errNoAnswer, who, subject, e.opts.timeout)
	case errors.Is(err, health.ErrInvalidConfig):
		return fmt.Errorf("%w: %v", errUsage, err)
	default:
		return fmt.Errorf("health query on %s: %w", subject, err)
	}
}
