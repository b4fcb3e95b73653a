package clustertest_test

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ozanturksever/go-cluster/clustertest"
	"github.com/ozanturksever/go-cluster/internal/natstest"
)

func TestRunServerGivesUsableJetStream(t *testing.T) {
	natstest.CheckLeaks(t) // runs after the subtest's cleanup: nothing may be left
	var dir string
	t.Run("server", func(t *testing.T) {
		s := clustertest.RunServer(t)
		dir = s.StoreDir()
		if got := s.URLs(); len(got) != 1 || got[0] != s.URL() || !strings.HasPrefix(s.URL(), "nats://127.0.0.1:") {
			t.Fatalf("URL %q, URLs %q", s.URL(), got)
		}
		kv := createBucket(t, s.URL(), jetstream.KeyValueConfig{Bucket: "orders"})
		if _, err := kv.Put(ctx(t), "lease", []byte("epoch-1")); err != nil {
			t.Fatal(err)
		}
		e, err := kv.Get(ctx(t), "lease")
		if err != nil || string(e.Value()) != "epoch-1" {
			t.Fatalf("Get = %v, %v", e, err)
		}
		if _, err := os.Stat(dir); err != nil {
			t.Fatalf("store dir: %v", err)
		}
	})
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("store dir %s left after cleanup: %v", dir, err)
	}
}

func TestServerRestartKeepsStateUntilClose(t *testing.T) {
	natstest.CheckLeaks(t)
	s, err := clustertest.StartServer()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	url := s.URL()
	kv := createBucket(t, url, jetstream.KeyValueConfig{Bucket: "orders"})
	if _, err := kv.Put(ctx(t), "lease", []byte("kept")); err != nil {
		t.Fatal(err)
	}
	s.Shutdown()
	s.Shutdown()
	if s.NATS() != nil {
		t.Fatal("NATS() is not nil while shut down")
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if s.URL() != url {
		t.Fatalf("restart moved the server from %s to %s", url, s.URL())
	}
	natstest.WaitFor(t, 10*time.Second, func() bool {
		e, err := kv.Get(ctx(t), "lease")
		return err == nil && string(e.Value()) == "kept"
	}, "value lost across a restart")

	dir := s.StoreDir()
	s.Close()
	s.Close()
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("store dir %s left after Close: %v", dir, err)
	}
	if err := s.Restart(); !errors.Is(err, clustertest.ErrClosed) {
		t.Fatalf("Restart after Close = %v, want ErrClosed", err)
	}
}

func TestCloseKeepsAStoreDirChosenByTheCaller(t *testing.T) {
	natstest.CheckLeaks(t)
	dir := t.TempDir()
	s, err := clustertest.StartServer(clustertest.WithOptions(func(o *server.Options) { o.StoreDir = dir }))
	if err != nil {
		t.Fatal(err)
	}
	if s.StoreDir() != dir {
		t.Fatalf("StoreDir = %s, want %s", s.StoreDir(), dir)
	}
	s.Close()
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the caller's store dir was removed: %v", err)
	}
}

func TestStartServerReportsWhyItFailed(t *testing.T) {
	natstest.CheckLeaks(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	start := time.Now()
	_, err = clustertest.StartServer(clustertest.WithOptions(func(o *server.Options) { o.Port = port }))
	if err == nil || !strings.Contains(err.Error(), "listen") {
		t.Fatalf("StartServer on a taken port = %v, want an error about listening", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the failure took %v to report", d)
	}
}

// createBucket connects to urls (closed at test cleanup) and creates a KV
// bucket.
func createBucket(t *testing.T, urls string, cfg jetstream.KeyValueConfig) jetstream.KeyValue {
	t.Helper()
	nc, err := nats.Connect(urls, nats.MaxReconnects(-1), nats.ReconnectWait(25*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.CreateKeyValue(ctx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

// ctx returns a context that ends with the test or after 5s.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	t.Cleanup(cancel)
	return c
}
