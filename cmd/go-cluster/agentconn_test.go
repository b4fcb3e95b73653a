package main

import (
	"strings"
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

// Clusters share the agent's connection when their resolved settings are
// alike (issue 43): the endpoint's Key is equal for settings that resolve
// alike wherever they are written (the file or the flags), equal across
// JetStream domains (each node is given its own), and differs with the
// server, the credentials or the TLS files.
func TestAgentConnectionKeyIsTheResolvedSettings(t *testing.T) {
	t.Parallel()
	env := getenvOf(map[string]string{"XDG_CONFIG_HOME": t.TempDir()})
	key := func(flags connFlags, file agent.Connection) string {
		t.Helper()
		ep, err := agentConnection(flags, file, env)
		if err != nil {
			t.Fatal(err)
		}
		if ep.Key == "" {
			t.Fatal("no key")
		}
		return ep.Key
	}
	base := agent.Connection{Servers: []string{"nats://127.0.0.1:4222"}, User: "u", Password: "p"}
	k := key(connFlags{}, base)
	if got := key(connFlags{}, base); got != k {
		t.Error("the same settings made two keys")
	}
	if got := key(connFlags{server: "nats://127.0.0.1:4222", user: "u", password: "p"}, agent.Connection{}); got != k {
		t.Error("the same settings from the flags made another key than from the file")
	}
	withDomain := base
	withDomain.JSDomain = "hub"
	if got := key(connFlags{}, withDomain); got != k {
		t.Error("a JetStream domain made another key: the connection is the same")
	}
	for name, c := range map[string]agent.Connection{
		"server":   {Servers: []string{"nats://127.0.0.1:4223"}, User: "u", Password: "p"},
		"password": {Servers: base.Servers, User: "u", Password: "q"},
		"tls ca":   {Servers: base.Servers, User: "u", Password: "p", TLS: agent.TLS{CA: "/ca.pem"}},
	} {
		if key(connFlags{}, c) == k {
			t.Errorf("another %s made the same key", name)
		}
	}
	if secret := key(connFlags{}, agent.Connection{Servers: base.Servers, User: "u", Password: "s3cret-word"}); strings.Contains(secret, "s3cret") {
		t.Errorf("the key %q holds the password", secret)
	}
}
