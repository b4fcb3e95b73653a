package agent

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/ozanturksever/go-cluster/internal/faultproxy"
	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// agentConns is how many client connections the server holds named as
// the agent of host names its own.
func agentConns(t *testing.T, srv *natstest.Server, host string) int {
	t.Helper()
	cz, err := srv.NATS().Connz(&server.ConnzOptions{Limit: 4096})
	if err != nil {
		t.Fatalf("connz: %v", err)
	}
	n := 0
	for _, c := range cz.Conns {
		if c.Name == connName(host) {
			n++
		}
	}
	return n
}

// statusOf is the agent's status of cluster name.
func statusOf(a *Agent, name string) ClusterStatus {
	for _, s := range a.Status() {
		if s.Cluster == name {
			return s
		}
	}
	return ClusterStatus{}
}

// sharingAgent runs an agent of host in the clusters named, each with
// the priority given, reaching NATS at the URL endpoint gives the
// cluster; each cluster's maintenance file is in dir.
func sharingAgent(t *testing.T, host, dir string, priorities map[string]int, endpoint func(string) string, logs *logBuffer) *Agent {
	t.Helper()
	cfg := &Config{}
	for name, prio := range priorities {
		cfg.Clusters = append(cfg.Clusters, Cluster{Name: name,
			Election:        Election{NodeID: host, LeaseTTL: Duration(time.Second), Priority: prio},
			MaintenanceFile: filepath.Join(dir, host+"-"+name)})
	}
	a, err := New(cfg, Options{Hostname: host, Logger: slog.New(slog.NewTextHandler(logs, nil)),
		Connect: func(cl Cluster) (Endpoint, error) { return Endpoint{URLs: []string{endpoint(cl.Name)}}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	a.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		a.Stop(ctx)
	})
	return a
}

// TestClustersShareOneConnectionPerSetting (issue 43): an agent's
// clusters with alike connection settings use one NATS connection, as
// the server's connz counts, and a cluster with other settings one more;
// each cluster still elects on its own (one put in maintenance hands
// over, the others keep their leader and epoch); a cut of the shared
// connection is in every one of its clusters' status, logged once for
// the connection, and they all recover; the agent's stop closes both
// connections.
func TestClustersShareOneConnectionPerSetting(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	proxy := faultproxy.New(t, srv.Addr())
	dir := t.TempDir()
	shared := []string{"web0", "web1", "web2", "web3"}
	// a reaches the four through the proxy, "db" directly: two settings.
	aEndpoint := func(name string) string {
		if name == "db" {
			return srv.URL()
		}
		return proxy.URL()
	}
	// a leads web0, web1 and db; b leads web2 and web3.
	aPrio := map[string]int{"web0": 100, "web1": 100, "web2": 0, "web3": 0, "db": 100}
	bPrio := map[string]int{"web0": 0, "web1": 0, "web2": 100, "web3": 100, "db": 0}
	var logA, logB logBuffer
	a := sharingAgent(t, "a", dir, aPrio, aEndpoint, &logA)
	b := sharingAgent(t, "b", dir, bPrio, func(string) string { return srv.URL() }, &logB)
	leaderOf := func(name string) string {
		if aPrio[name] > bPrio[name] {
			return "a"
		}
		return "b"
	}
	for name := range aPrio {
		natstest.WaitFor(t, 15*time.Second, func() bool {
			sa, sb := statusOf(a, name), statusOf(b, name)
			return sa.Leader == leaderOf(name) && sb.Leader == leaderOf(name) && sa.Ready && sb.Ready
		}, "cluster %s never led by %s: a %s; b %s", name, leaderOf(name), lazyStatus{a}, lazyStatus{b})
	}
	if n := agentConns(t, srv, "a"); n != 2 {
		t.Errorf("agent a of 5 clusters on 2 settings holds %d connections, want 2", n)
	}
	if n := agentConns(t, srv, "b"); n != 1 {
		t.Errorf("agent b of 5 clusters on 1 setting holds %d connections, want 1", n)
	}
	if n := proxy.Conns(); n != 1 {
		t.Errorf("the proxy carries %d connections of a's 4 clusters, want 1", n)
	}

	// One cluster hands over; the others keep their leaders and epochs.
	epochs := map[string]int64{}
	for name := range aPrio {
		epochs[name] = statusOf(b, name).Epoch
	}
	if err := os.WriteFile(filepath.Join(dir, "a-web0"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 15*time.Second, func() bool { return statusOf(b, "web0").Leader == "b" },
		"web0 never handed over to b: %s", lazyStatus{b})
	for name := range aPrio {
		if name == "web0" {
			continue
		}
		if s := statusOf(b, name); s.Leader != leaderOf(name) || s.Epoch != epochs[name] {
			t.Errorf("cluster %s changed when web0 handed over: leader %s epoch %d, was %s epoch %d", name, s.Leader, s.Epoch, leaderOf(name), epochs[name])
		}
	}
	if err := os.Remove(filepath.Join(dir, "a-web0")); err != nil {
		t.Fatal(err)
	}

	// The shared connection cut: every one of its clusters says so.
	proxy.Cut()
	for _, name := range shared {
		natstest.WaitFor(t, 10*time.Second, func() bool { return statusOf(a, name).NATS == NATSLost },
			"a's status of %s never said NATS is lost: %s", name, lazyStatus{a})
		if s := statusOf(a, name); s.Ready || !strings.Contains(s.Reason, "NATS connection lost") {
			t.Errorf("a's status of %s while its connection is cut: ready %v, reason %q", name, s.Ready, s.Reason)
		}
	}
	if s := statusOf(a, "db"); s.NATS != NATSConnected {
		t.Errorf("db, on the other connection, says NATS is %q", s.NATS)
	}
	for _, name := range shared {
		rec := httptest.NewRecorder()
		a.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz/"+name, nil))
		if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "NATS connection lost") {
			t.Errorf("/readyz/%s while its connection is cut: %d %q", name, rec.Code, rec.Body.String())
		}
	}
	proxy.Restore()
	for _, name := range shared {
		natstest.WaitFor(t, 15*time.Second, func() bool {
			s := statusOf(a, name)
			return s.NATS == NATSConnected && s.Leader == leaderOf(name) && s.Ready
		}, "a's %s never recovered: %s", name, lazyStatus{a})
	}
	lost := fmt.Sprintf(`clusters=%s`, strings.Join(shared, ","))
	natstest.WaitFor(t, 5*time.Second, func() bool { return logA.countLines("NATS connection back", lost) > 0 },
		"a never logged the shared connection back:\n%s", &logA)
	if n := logA.countLines("NATS connection lost", lost); n != 1 {
		t.Errorf("a logged the loss of the shared connection %d times (naming its clusters, %s), want once:\n%s", n, lost, &logA)
	}
	if n := logA.count("NATS connection lost"); n != 1 {
		t.Errorf("a logged %d NATS losses, want one:\n%s", n, &logA)
	}
	if n := logA.countLines("NATS connection back", lost, "after="); n != 1 {
		t.Errorf("a logged the shared connection back %d times, want once:\n%s", n, &logA)
	}
	if n := agentConns(t, srv, "a"); n != 2 {
		t.Errorf("after the cut agent a holds %d connections, want 2", n)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a.Stop(ctx)
	if n := a.conns.open(); n != 0 {
		t.Errorf("a's pool holds %d connections after Stop", n)
	}
	natstest.WaitFor(t, 5*time.Second, func() bool { return agentConns(t, srv, "a") == 0 },
		"a's connections are still open after Stop: %d", agentConns(t, srv, "a"))
}

// TestReloadMovesClustersBetweenSharedConnections (issue 43): a reload
// that adds a cluster on a connection in use adds no connection; one that
// changes a cluster's connection moves it to a connection of its new
// settings, a new one or one in use; one that leaves a connection unused
// closes it.
func TestReloadMovesClustersBetweenSharedConnections(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	proxy := faultproxy.New(t, srv.Addr()) // another URL of the same server: other settings
	direct, other := Connection{Servers: []string{srv.URL()}}, Connection{Servers: []string{proxy.URL()}}
	cluster := func(name string, conn Connection) Cluster {
		return Cluster{Name: name, Connection: conn, Election: Election{NodeID: "a", LeaseTTL: Duration(time.Second)}}
	}
	cfg := &Config{Clusters: []Cluster{cluster("x", direct), cluster("y", direct)}}
	a, err := New(cfg, Options{Hostname: "a", Logger: quiet(),
		Connect: func(cl Cluster) (Endpoint, error) { return Endpoint{URLs: cl.Connection.Servers}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	a.Start()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	defer a.Stop(ctx)
	allLead := func(step string, names ...string) {
		t.Helper()
		for _, name := range names {
			natstest.WaitFor(t, 10*time.Second, func() bool { s := statusOf(a, name); return s.Role == "PRIMARY" && s.NATS == NATSConnected },
				"%s: %s never led: %s", step, name, lazyStatus{a})
		}
	}
	conns := func(step string, want, viaProxy int) {
		t.Helper()
		natstest.WaitFor(t, 5*time.Second, func() bool { return agentConns(t, srv, "a") == want && proxy.Conns() == viaProxy },
			"%s: the agent holds %d connections (%d through the proxy), want %d (%d)", step, agentConns(t, srv, "a"), proxy.Conns(), want, viaProxy)
		if n := a.conns.open(); n != want {
			t.Errorf("%s: the pool holds %d connections, want %d", step, n, want)
		}
	}
	allLead("start", "x", "y")
	conns("start", 1, 0)

	cfg = &Config{Clusters: []Cluster{cluster("x", direct), cluster("y", direct), cluster("z", direct)}}
	if err := a.Reload(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	allLead("z added", "x", "y", "z")
	conns("z added", 1, 0)

	cfg = &Config{Clusters: []Cluster{cluster("x", direct), cluster("y", other), cluster("z", direct)}}
	if err := a.Reload(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	allLead("y moved", "x", "y", "z")
	conns("y moved", 2, 1)

	cfg = &Config{Clusters: []Cluster{cluster("x", direct), cluster("y", other), cluster("z", direct), cluster("w", other)}}
	if err := a.Reload(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	allLead("w added beside y", "x", "y", "z", "w")
	conns("w added beside y", 2, 1)

	cfg = &Config{Clusters: []Cluster{cluster("x", direct), cluster("y", direct), cluster("z", direct), cluster("w", other)}}
	if err := a.Reload(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	allLead("y moved back", "x", "y", "z", "w")
	conns("y moved back", 2, 1)

	cfg = &Config{Clusters: []Cluster{cluster("w", other)}}
	if err := a.Reload(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	allLead("x, y and z removed", "w")
	conns("x, y and z removed", 1, 1)
}

// TestUnreachableNATSAtStartIsLoggedOncePerConnection (issue 43): ten
// clusters on one connection, started while no server answers: the agent
// says so once at WARN for the connection, not once per cluster, and once
// when it reaches the server; then every cluster starts, on one
// connection.
func TestUnreachableNATSAtStartIsLoggedOncePerConnection(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	url := srv.URL()
	srv.Shutdown()
	var logs logBuffer
	cfg := &Config{}
	for i := range 10 {
		cfg.Clusters = append(cfg.Clusters, Cluster{Name: fmt.Sprintf("down%d", i), Election: Election{NodeID: "a", LeaseTTL: Duration(time.Second)}})
	}
	a, err := New(cfg, Options{Hostname: "a", Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Connect: func(Cluster) (Endpoint, error) { return Endpoint{URLs: []string{url}}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	a.Start()
	defer a.Stop(t.Context())
	natstest.WaitFor(t, 4*retryConnect, func() bool { return logs.countLines("level=DEBUG", "still cannot reach NATS") >= 1 },
		"the agent did not try again: %s", &logs)
	srv.Restart(t)
	natstest.WaitFor(t, 15*time.Second, func() bool {
		for _, s := range a.Status() {
			if !s.Running {
				return false
			}
		}
		return true
	}, "not every cluster started: %s", lazyStatus{a})
	natstest.WaitFor(t, 5*time.Second, func() bool { return logs.countLines("NATS reached", "after=") >= 1 },
		"no line says NATS was reached: %s", &logs)
	if n := logs.countLines("level=WARN", "cannot reach NATS"); n != 1 {
		t.Errorf("%d WARN lines say NATS cannot be reached, want 1 for the connection:\n%s", n, &logs)
	}
	if n := logs.countLines("NATS reached", "after="); n != 1 {
		t.Errorf("%d lines say NATS was reached, want 1 for the connection:\n%s", n, &logs)
	}
	if n := agentConns(t, srv, "a"); n != 1 {
		t.Errorf("the 10 clusters hold %d connections, want 1", n)
	}
}
