package main

import (
	"testing"

	"github.com/ozanturksever/go-cluster/internal/agent"
)

// The agent's file names a JetStream domain for a node behind a leaf
// node; --js-domain (or GO_CLUSTER_JS_DOMAIN) overrides it. The node is
// given it as cluster.Config.JetStreamDomain.
func TestAgentConnectionCarriesTheJetStreamDomain(t *testing.T) {
	t.Parallel()
	env := getenvOf(map[string]string{"XDG_CONFIG_HOME": t.TempDir()})
	file := agent.Connection{Servers: []string{"nats://127.0.0.1:4222"}, JSDomain: "hub"}
	ep, err := agentConnection(connFlags{}, file, env)
	if err != nil {
		t.Fatal(err)
	}
	if ep.JetStreamDomain != "hub" || len(ep.URLs) != 1 || ep.URLs[0] != "nats://127.0.0.1:4222" {
		t.Errorf("endpoint = %+v, want domain hub on the file's server", ep)
	}
	ep, err = agentConnection(connFlags{jsDomain: "edge"}, file, env)
	if err != nil || ep.JetStreamDomain != "edge" {
		t.Errorf("with --js-domain edge: %+v, %v", ep, err)
	}
}
