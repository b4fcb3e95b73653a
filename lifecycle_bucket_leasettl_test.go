package cluster

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ozanturksever/go-cluster/internal/bucketmeta"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/store"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// CreateBucket writes BucketOptions.LeaseTTL (or wire.DefaultLeaseTTL) into the
// new bucket's metadata, with the protocol, and refuses a LeaseTTL out of
// a Config's bounds, naming the field.
func TestCreateBucketLeaseTTL(t *testing.T) {
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	js, _ := jetstream.New(srv.Connect(t))
	for _, c := range []struct{ ttl, want time.Duration }{{0, wire.DefaultLeaseTTL}, {2500 * time.Millisecond, 2500 * time.Millisecond}} {
		id := uniqueClusterID(t)
		if _, _, err := store.Create(ctx(t), js, id, store.Options{LeaseTTL: c.ttl}); err != nil {
			t.Fatal(err)
		}
		m, err := bucketmeta.Parse(streamInfo(t, js, id).Config.Metadata)
		if err != nil || m != (bucketmeta.Meta{LeaseTTL: c.want, MaxTTL: c.want, Protocol: wire.Protocol}) {
			t.Errorf("a bucket created with LeaseTTL %v has metadata %+v, %v; want %v", c.ttl, m, err, c.want)
		}
	}
	for _, ttl := range []time.Duration{-time.Second, wire.MinLeaseTTL - 1, wire.MaxLeaseTTL + 1} {
		id := uniqueClusterID(t)
		_, _, err := store.Create(ctx(t), js, id, store.Options{LeaseTTL: ttl})
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "LeaseTTL") {
			t.Errorf("CreateBucket with LeaseTTL %v = %v, want ErrInvalidConfig naming LeaseTTL", ttl, err)
		}
	}
	// A Config's LeaseTTL is reported once, under its own name.
	cfg := testConfig("c", "n", srv.URL())
	cfg.LeaseTTL = wire.MinLeaseTTL - 1
	if err := cfg.Validate(); err == nil || strings.Count(err.Error(), "LeaseTTL") != 1 || strings.Contains(err.Error(), "BucketLeaseTTL") {
		t.Errorf("Config.Validate with LeaseTTL %v = %v; want it named once, as LeaseTTL", cfg.LeaseTTL, err)
	}
}
