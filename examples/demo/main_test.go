package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/store"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// Against an external server, the demo deletes the bucket it created and
// keeps one that was there before.
func TestDemoExternalServerBucket(t *testing.T) {
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	js, err := jetstream.New(srv.Connect(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, _, err := store.Create(ctx, js, "kept", store.Options{LeaseTTL: time.Second}); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		cluster string
		deleted bool
	}{{"fresh", true}, {"kept", false}} {
		var out strings.Builder
		if err := run(&out, options{nodes: 3, ttl: time.Second, natsURL: srv.URL(), clusterID: tc.cluster}); err != nil {
			t.Fatalf("%s: %v\n%s", tc.cluster, err, out.String())
		}
		bucket := wire.BucketName(tc.cluster)
		_, err := js.KeyValue(ctx, bucket)
		if gone := errors.Is(err, jetstream.ErrBucketNotFound); gone != tc.deleted || (!gone && err != nil) {
			t.Errorf("%s: bucket lookup after the demo: %v, want deleted=%v", bucket, err, tc.deleted)
		}
		if said := strings.Contains(out.String(), "deleted the bucket "+bucket); said != tc.deleted {
			t.Errorf("%s: output says deleted=%v, want %v:\n%s", bucket, said, tc.deleted, out.String())
		}
		if !strings.Contains(out.String(), "summary: graceful handover") {
			t.Errorf("%s: no summary:\n%s", tc.cluster, out.String())
		}
	}
}
