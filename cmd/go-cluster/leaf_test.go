package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// Every command works through a leaf node when given the hub's JetStream
// domain: the nodes and the CLI connect to the leaf, the bucket is the
// hub's. Without the domain the leaf's own JetStream answers, and has no
// bucket.
func TestCLIThroughLeafNode(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	bin := buildCLI(t)
	hub := natstest.RunHub(t, "hub")
	leaf := natstest.RunLeaf(t, hub, "leaf")
	const id = "edge"
	inHub := func(c *cluster.Config) { c.JetStreamDomain = "hub" }
	ms := []*member{
		startMemberOn(t, leaf.Connect(t, nats.Name("a")), id, "a", inHub),
		startMemberOn(t, leaf.Connect(t, nats.Name("b")), id, "b", inHub),
	}
	leader := waitLeader(t, ms)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := leader.node.State().Put(ctx, "site.mode", []byte("edge")); err != nil {
		t.Fatalf("state put through the leaf: %v", err)
	}
	cli := func(env []string, args ...string) result {
		t.Helper()
		return runCLI(t, bin, env, append([]string{"-s", leaf.URL(), "--cluster", id, "--timeout", "5s"}, args...)...)
	}
	domain := []string{"--js-domain", "hub"}

	r := cli(nil, append(domain, "status", "--json", "--settle", "1s")...)
	var st statusReport
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &st) != nil {
		t.Fatalf("status: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if st.Leader != leader.node.Config().NodeID || st.Epoch != leader.node.Epoch() || len(st.Members) != 2 {
		t.Errorf("status through the leaf: %s", r.stdout)
	}

	r = cli(nil, append(domain, "state", "ls")...)
	if r.code != 0 || strings.TrimSpace(r.stdout) != "site.mode" {
		t.Errorf("state ls: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	// The domain from the environment.
	r = cli([]string{envJSDomain + "=hub"}, "state", "get", "site.mode")
	if r.code != 0 || r.stdout != "edge" {
		t.Errorf("state get with %s: exit %d, %q %q", envJSDomain, r.code, r.stdout, r.stderr)
	}
	// Without it, the leaf's own JetStream has no such bucket.
	r = cli(nil, "status")
	if r.code != 1 || !strings.Contains(r.stderr, "has no KV bucket") {
		t.Errorf("status without the domain: exit %d, %q", r.code, r.stderr)
	}

	old := leader.node.Epoch()
	r = cli(nil, append(domain, "stepdown", "--timeout", "10s")...)
	if r.code != 0 {
		t.Fatalf("stepdown: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	next := other(ms, leader)
	natstest.WaitFor(t, 10*time.Second, func() bool { return next.node.IsLeader() && next.node.Epoch() == old+1 },
		"%s did not take over after the stepdown", next.node.Config().NodeID)
}
