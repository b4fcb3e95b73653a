package proctest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// startNATSWithDomain starts a nats-server process whose JetStream is in
// domain, with the config block extra (leafnodes) added.
func startNATSWithDomain(t *testing.T, bin, name, domain, extra string) *natsProc {
	t.Helper()
	dir := t.TempDir()
	p := &natsProc{bin: bin, dir: dir, conf: filepath.Join(dir, "nats.conf"), port: freePort(t)}
	text := fmt.Sprintf("listen: \"127.0.0.1:%d\"\nserver_name: %s\njetstream {\n  store_dir: %q\n  domain: %s\n  sync_interval: always\n}\n%s",
		p.port, name, filepath.Join(dir, "js"), domain, extra)
	if err := os.WriteFile(p.conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.stop(syscall.SIGKILL) })
	p.start(t)
	return p
}

// TestAgentBehindALeafNode: a hub nats-server (JetStream domain hub) and a
// leaf nats-server (its own JetStream, domain leaf) connected to it, both
// processes. Two agents connect to the leaf with js_domain: hub: they
// elect in the hub's bucket (the leaf's JetStream has none), and SIGTERM
// of the leader hands over to the other at once.
func TestAgentBehindALeafNode(t *testing.T) {
	// Runs alone: an upper bound on time (SIGTERM's handover within lease_ttl/2).
	natsBin, _ := binaries(t)
	leafPort := freePort(t)
	startNATSWithDomain(t, natsBin, "hub", "hub", fmt.Sprintf("leafnodes {\n  listen: \"127.0.0.1:%d\"\n}\n", leafPort))
	leaf := startNATSWithDomain(t, natsBin, "leaf", "leaf",
		fmt.Sprintf("leafnodes {\n  reconnect: \"100ms\"\n  remotes: [{url: \"nats-leaf://127.0.0.1:%d\"}]\n}\n", leafPort))

	// Through the leaf, the hub's JetStream answers in its domain.
	nc, err := nats.Connect(leaf.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	hubJS, err := jetstream.NewWithDomain(nc, "hub")
	if err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 15*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := hubJS.AccountInfo(ctx)
		return err == nil
	}, "the hub's JetStream does not answer through the leaf")

	dir := t.TempDir()
	const ttl = 2 * time.Second
	agents := map[string]*runProc{}
	for _, id := range []string{"a", "b"} {
		conf := fmt.Sprintf(`clusters:
  - name: agentleaf
    connection: {servers: [%q], js_domain: hub}
    election: {node_id: %s, lease_ttl: %s}
    notify:
      become_leader: [sh, -c, 'echo "$GO_CLUSTER_NODE $(date +%%s%%N)" >> %s/leaders.log']
`, leaf.URL(), id, ttl, dir)
		file := filepath.Join(dir, id+".yaml")
		if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		p := &runProc{node: id, stderr: filepath.Join(t.TempDir(), id+".stderr"), exited: make(chan struct{})}
		startProc(t, p, nil, "agent", "--config", file)
		agents[id] = p
		if id == "a" {
			natstest.WaitFor(t, 5*ttl, func() bool { return lastLeader(t, dir) == "a" }, "a did not lead through the leaf")
		}
	}
	natstest.WaitFor(t, 10*time.Second, func() bool { return agents["b"].logged("node started") }, "b did not start")

	// The bucket is the hub's; the leaf's own JetStream has none.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := hubJS.KeyValue(ctx, wire.BucketName("agentleaf")); err != nil {
		t.Fatalf("the hub has no bucket of the cluster: %v", err)
	}
	leafJS, err := jetstream.NewWithDomain(nc, "leaf")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leafJS.KeyValue(ctx, wire.BucketName("agentleaf")); !errors.Is(err, jetstream.ErrBucketNotFound) {
		t.Fatalf("the leaf's own JetStream: %v, want ErrBucketNotFound", err)
	}

	agents["a"].signal(syscall.SIGTERM)
	stopped := time.Now()
	if code := agents["a"].waitExit(t, 20*time.Second); code != 0 {
		t.Fatalf("a exited %d", code)
	}
	natstest.WaitFor(t, 3*ttl, func() bool { return lastLeader(t, dir) == "b" }, "b did not take over through the leaf")
	took := time.Since(stopped)
	if took > ttl/2 {
		t.Fatalf("b took over %v after a's SIGTERM: not a handover (lease_ttl %v)", took, ttl)
	}
	t.Logf("b took over %v after a's SIGTERM, through the leaf", took.Round(time.Millisecond))
}
