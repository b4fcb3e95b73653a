package bucketmeta

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// runJS starts an embedded server, checks for leaked goroutines, and
// returns a JetStream client of it.
func runJS(t *testing.T) jetstream.JetStream {
	t.Helper()
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	js, err := jetstream.New(srv.Connect(t))
	if err != nil {
		t.Fatal(err)
	}
	return js
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// newBucket creates a bucket configured as the library does (History 8,
// limit markers), with meta as its metadata (nil: none, as a bucket of
// protocol 1), and returns it with its stream's name.
func newBucket(t *testing.T, js jetstream.JetStream, name string, meta map[string]string) (jetstream.KeyValue, string) {
	t.Helper()
	kv, err := js.CreateKeyValue(testCtx(t), jetstream.KeyValueConfig{Bucket: name, History: 8, LimitMarkerTTL: time.Second, Metadata: meta})
	if err != nil {
		t.Fatal(err)
	}
	return kv, "KV_" + name
}

// info is the stream's info as the server has it now.
func info(t *testing.T, js jetstream.JetStream, stream string) *jetstream.StreamInfo {
	t.Helper()
	s, err := js.Stream(testCtx(t), stream)
	if err != nil {
		t.Fatal(err)
	}
	return s.CachedInfo()
}

// metaOf is the parsed metadata of the stream.
func metaOf(t *testing.T, js jetstream.JetStream, stream string) Meta {
	t.Helper()
	m, err := Parse(info(t, js, stream).Config.Metadata)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// serverKeys are the server's own metadata keys of a configuration.
func serverKeys(cfg jetstream.StreamConfig) map[string]string {
	out := map[string]string{}
	for k, v := range cfg.Metadata {
		if strings.HasPrefix(k, "_nats.") {
			out[k] = v
		}
	}
	return out
}
