package natstest

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
)

func TestClusterStreamLeaderFailover(t *testing.T) {
	t.Parallel() // each its own cluster; it waits on the servers' elections
	CheckLeaks(t)
	start := time.Now()
	c := RunCluster(t, 3)
	t.Logf("cluster of 3 ready in %v", time.Since(start))

	if got := len(c.URLs()); got != 3 {
		t.Fatalf("URLs() has %d entries, want 3", got)
	}
	for i, s := range c.Servers() {
		if s != c.Server(i) {
			t.Fatalf("Servers()[%d] != Server(%d)", i, i)
		}
		if got, want := s.NATS().Name(), []string{"n0", "n1", "n2"}[i]; got != want {
			t.Fatalf("server %d is named %q, want %q", i, got, want)
		}
	}

	nc := c.Connect(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.CreateKeyValue(ctx(t, 10*time.Second), jetstream.KeyValueConfig{Bucket: "cluster-x", Replicas: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx(t, 5*time.Second), "lease", []byte("1")); err != nil {
		t.Fatal(err)
	}

	const account, stream = "$G", "KV_cluster-x"
	old := c.WaitForStreamLeader(t, account, stream, 10*time.Second)
	start = time.Now()
	c.Shutdown(old)
	if got := len(c.URLs()); got != 2 {
		t.Fatalf("URLs() has %d entries after a shutdown, want 2", got)
	}
	leader := c.WaitForStreamLeader(t, account, stream, 10*time.Second)
	if leader == old {
		t.Fatalf("stream leader is still the shut-down server %d", old)
	}
	t.Logf("new stream leader n%d elected in %v", leader, time.Since(start))

	// The bucket keeps working (the client may have to reconnect first).
	WaitFor(t, 10*time.Second, func() bool {
		_, err := kv.Put(ctx(t, time.Second), "lease", []byte("2"))
		return err == nil
	}, "bucket not writable after losing the stream leader")

	// The old leader rejoins with its data and catches up.
	c.Restart(t, old)
	WaitFor(t, 10*time.Second, func() bool {
		ns := c.Server(old).NATS()
		return ns.JetStreamIsStreamCurrent(account, stream)
	}, "restarted server did not catch up on %s", stream)
	e, err := kv.Get(ctx(t, 5*time.Second), "lease")
	if err != nil {
		t.Fatal(err)
	}
	if string(e.Value()) != "2" {
		t.Fatalf("lease = %q, want %q", e.Value(), "2")
	}
}

func TestClusterDoesNotAdvertise(t *testing.T) {
	CheckLeaks(t)
	c := RunCluster(t, 3)
	nc := c.Server(0).Connect(t)
	// Wait for the INFO that a cluster sends once routes are up, if any.
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := nc.DiscoveredServers(); len(got) != 0 {
		t.Fatalf("client discovered %v; servers must not advertise", got)
	}
	if got := nc.Servers(); len(got) != 1 {
		t.Fatalf("client knows servers %v, want only the one given", got)
	}
}

func TestClusterFullRestartKeepsKV(t *testing.T) {
	t.Parallel() // each its own cluster; it waits on the servers' elections
	CheckLeaks(t)
	c := RunCluster(t, 3)
	nc := c.Connect(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.CreateKeyValue(ctx(t, 10*time.Second), jetstream.KeyValueConfig{Bucket: "cluster-y", Replicas: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx(t, 5*time.Second), "lease", []byte("kept")); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		c.Shutdown(i)
	}
	if got := c.URLs(); len(got) != 0 {
		t.Fatalf("URLs() = %v with every member down", got)
	}
	if got := c.StreamLeader("$G", "KV_cluster-y"); got != -1 {
		t.Fatalf("StreamLeader = %d with every member down", got)
	}
	// The first restart has no quorum to catch up with and must not wait
	// for one; the second restores the quorum.
	start := time.Now()
	for i := range 3 {
		c.Restart(t, i)
		t.Logf("n%d restarted at %v", i, time.Since(start))
	}
	c.WaitForStreamLeader(t, "$G", "KV_cluster-y", 10*time.Second)
	t.Logf("stream leader at %v", time.Since(start))
	WaitFor(t, 10*time.Second, func() bool {
		e, err := kv.Get(ctx(t, time.Second), "lease")
		return err == nil && string(e.Value()) == "kept"
	}, "bucket lost its data across a full cluster restart")
}

func TestRunClusterReportsStartFailure(t *testing.T) {
	CheckLeaks(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	taken := ln.Addr().(*net.TCPAddr).Port

	f := &fakeTB{TB: t}
	f.run(func() {
		RunCluster(f, 3, WithOptions(func(o *server.Options) { o.Cluster.Port = taken }))
	})
	f.runCleanups()
	if len(f.failures) != 1 || !strings.Contains(f.failures[0], "router port") {
		t.Fatalf("failures = %q, want one about the route port", f.failures)
	}
}
