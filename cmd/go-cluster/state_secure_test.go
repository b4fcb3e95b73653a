package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/securetest"
)

// stateReaderPermissions are what the README says an operator needs to
// read a cluster's state with the CLI.
func stateReaderPermissions(clusterID string) securetest.Permissions {
	stream := "KV_cluster-" + clusterID
	return securetest.Permissions{
		Publish: []string{
			"$JS.API.STREAM.INFO." + stream,
			"$JS.API.CONSUMER.CREATE." + stream + ".>",
			"$JS.API.CONSUMER.DELETE." + stream + ".>",
			"$JS.API.CONSUMER.MSG.NEXT." + stream + ".>", // the lease watch's pull requests
			"$JS.API.STREAM.MSG.GET." + stream,
		},
		Subscribe: []string{"_INBOX.>"},
	}
}

// The state commands work for a user with only the permissions the
// README lists, without waiting on a refused request.
func TestCLIStatePermissions(t *testing.T) {
	// Runs alone: it bounds each refused request from above (3s), which other tests' load would stretch.
	natstest.CheckLeaks(t)
	bin := buildCLI(t)
	const id = "perm"
	ns := securetest.RunServer(t, func(o *server.Options) {
		o.Users = []*server.User{
			{Username: "node", Password: "n"},
			{Username: "reader", Password: "r", Permissions: stateReaderPermissions(id).Server()},
		}
	})
	nc, err := nats.Connect(ns.ClientURL(), nats.UserInfo("node", "n"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	m := startMemberOn(t, nc, id, "p1")
	natstest.WaitFor(t, 15*time.Second, m.node.IsLeader, "p1 did not lead")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := m.node.State().Put(ctx, "config.mode", []byte("fast")); err != nil {
		t.Fatal(err)
	}

	reader := []string{"-s", ns.ClientURL(), "--user", "reader", "--password", "r", "--cluster", id, "--timeout", "5s"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"state", "get", "config.mode"}, "fast"},
		{[]string{"state", "ls"}, "config.mode\n"},
		{[]string{"state", "watch", "--count", "1"}, "config.mode = fast"},
	} {
		start := time.Now()
		r := runCLI(t, bin, nil, append(append([]string{}, reader...), tc.args...)...)
		if took := time.Since(start); took > 3*time.Second {
			t.Errorf("%q took %v: something waited for a refused request", tc.args, took)
		}
		if r.code != 0 || !strings.Contains(r.stdout, tc.want) || r.stderr != "" {
			t.Errorf("%q: exit %d, %q, %q; want %q", tc.args, r.code, r.stdout, r.stderr, tc.want)
		}
	}
}
