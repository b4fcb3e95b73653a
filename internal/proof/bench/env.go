package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/clustertest"
	"github.com/ozanturksever/go-cluster/internal/freeport"
)

// backend is a NATS deployment the figures run on.
type backend struct {
	desc     string   // for the parameters column
	urls     []string // client URLs
	mon      monitor  // nil when the server's statistics cannot be read
	replicas int      // bucket replicas
	srv      *child   // a single server in a child process (its CPU and RSS), or nil
	members  []*child // cluster members in child processes, or nil
	stores   []string // store directories to remove
	close    func()
}

// shutdown stops what the backend started.
func (b *backend) shutdown() {
	if b.close != nil {
		b.close()
	}
	for _, d := range b.stores {
		_ = os.RemoveAll(d)
	}
}

// embeddedBackend is one JetStream server inside this process.
func embeddedBackend() (*backend, error) {
	s, err := clustertest.StartServer()
	if err != nil {
		return nil, err
	}
	return &backend{desc: "embedded", urls: s.URLs(), mon: inprocMonitor{s.NATS()}, replicas: 1, close: s.Close}, nil
}

// childBackend is one JetStream server in a child process, with its
// descriptor limit set to nofile (0: inherited) and its Go runtime's
// statistics served (child.goStats).
func childBackend(ctx context.Context, nofile uint64) (*backend, error) {
	ports, err := freeport.Reserve(3)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "go-cluster-bench-")
	if err != nil {
		return nil, err
	}
	c, err := startChild(serverSpec{name: "bench", port: ports[0], httpPort: ports[1], statsPort: ports[2], nofile: nofile, store: dir,
		logFile: filepath.Join(os.TempDir(), fmt.Sprintf("go-cluster-bench-server-%d.log", ports[0]))})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	b := &backend{desc: "server process", urls: []string{c.url()}, mon: c.monitor(), replicas: 1, srv: c, stores: []string{dir}, close: c.stop}
	if err := c.waitHealthy(ctx); err != nil {
		b.shutdown()
		return nil, err
	}
	return b, nil
}

// clusterBackend is a JetStream cluster of size servers, each in a child
// process, joined by routes on 127.0.0.1.
func clusterBackend(ctx context.Context, size int) (*backend, error) {
	ports, err := freeport.Reserve(3 * size)
	if err != nil {
		return nil, err
	}
	var routes []string
	for i := range size {
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", ports[3*i+1]))
	}
	b := &backend{desc: fmt.Sprintf("%d-server cluster", size), replicas: size}
	b.close = func() {
		for _, m := range b.members {
			m.stop()
		}
	}
	for i := range size {
		dir, err := os.MkdirTemp("", "go-cluster-bench-")
		if err != nil {
			b.shutdown()
			return nil, err
		}
		b.stores = append(b.stores, dir)
		spec := serverSpec{name: fmt.Sprintf("n%d", i), port: ports[3*i], clusterPort: ports[3*i+1], httpPort: ports[3*i+2], routes: routes, store: dir}
		c, err := startChild(spec)
		if err != nil {
			b.shutdown()
			return nil, err
		}
		b.members = append(b.members, c)
		b.urls = append(b.urls, c.url())
	}
	b.mon = b.members[0].monitor()
	if err := b.waitClusterReady(ctx); err != nil {
		b.shutdown()
		return nil, err
	}
	return b, nil
}

// waitClusterReady waits until every member is current and a stream
// replicated on every member can be created.
func (b *backend) waitClusterReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for _, m := range b.members {
		if err := m.waitHealthy(ctx); err != nil {
			return err
		}
	}
	nc, err := nats.Connect(strings.Join(b.urls, ","))
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	cfg := jetstream.StreamConfig{Name: "bench_ready", Replicas: len(b.members)}
	for {
		actx, acancel := context.WithTimeout(ctx, 2*time.Second)
		_, err = js.CreateOrUpdateStream(actx, cfg)
		acancel()
		if err == nil {
			return js.DeleteStream(ctx, cfg.Name)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster not ready: %w (%v)", ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// restartMember starts member i again on its ports and store, and waits
// until it is current.
func (b *backend) restartMember(ctx context.Context, i int) error {
	c, err := startChild(b.members[i].spec)
	if err != nil {
		return err
	}
	b.members[i] = c
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	return c.waitHealthy(ctx)
}

// memberIndex returns the index of the member named name, or -1.
func (b *backend) memberIndex(name string) int {
	for i, m := range b.members {
		if m.spec.name == name {
			return i
		}
	}
	return -1
}

// externalBackend is a deployment given on the command line.
func externalBackend(urls []string, monURL string, replicas int) *backend {
	b := &backend{desc: "external", urls: urls, replicas: replicas}
	if monURL != "" {
		b.mon = newHTTPMonitor(monURL)
	}
	return b
}
