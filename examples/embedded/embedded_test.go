package embedded

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// A started server serves JetStream KV on loopback; Close stops it,
// removes its store, leaves no goroutine behind, and may be called again.
func TestStartServesJetStreamUntilClose(t *testing.T) {
	natstest.CheckLeaks(t)
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if !strings.HasPrefix(s.URL(), "nats://127.0.0.1:") {
		t.Errorf("URL %q is not on 127.0.0.1", s.URL())
	}
	if _, err := os.Stat(s.dir); err != nil {
		t.Fatalf("store directory: %v", err)
	}

	nc, err := nats.Connect(s.URL(), nats.NoReconnect())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if e, err := kv.Get(ctx, "k"); err != nil || string(e.Value()) != "v" {
		t.Fatalf("get: %v %v", e, err)
	}
	nc.Close()

	s.Close()
	s.Close()
	if _, err := os.Stat(s.dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("store directory after Close: %v, want it gone", err)
	}
	if nc, err := nats.Connect(s.URL(), nats.NoReconnect(), nats.Timeout(time.Second)); err == nil {
		nc.Close()
		t.Error("the server still accepts clients after Close")
	}
}

// Two servers run side by side, each on its own port and store.
func TestStartTwice(t *testing.T) {
	natstest.CheckLeaks(t)
	a, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	b, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	if a.URL() == b.URL() || a.dir == b.dir {
		t.Errorf("two servers share %s / %s", a.URL(), a.dir)
	}
}
