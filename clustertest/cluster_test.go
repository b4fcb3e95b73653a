package clustertest_test

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ozanturksever/go-cluster/clustertest"
	"github.com/ozanturksever/go-cluster/internal/natstest"
)

func TestRunClusterGivesReplicatedKV(t *testing.T) {
	natstest.CheckLeaks(t) // runs after the subtest's cleanup: nothing may be left
	var dirs []string
	t.Run("cluster", func(t *testing.T) {
		c := clustertest.RunCluster(t, 3)
		if c.MetaLeader() < 0 {
			t.Fatal("no JetStream meta leader")
		}
		if got := c.URLs(); len(got) != 3 || c.URL() != strings.Join(got, ",") {
			t.Fatalf("URLs %q, URL %q", got, c.URL())
		}
		for i, s := range c.Servers() {
			if got, want := s.NATS().Name(), []string{"n0", "n1", "n2"}[i]; got != want {
				t.Fatalf("member %d is named %q, want %q", i, got, want)
			}
			dirs = append(dirs, s.StoreDir())
		}

		kv := createBucket(t, c.URL(), jetstream.KeyValueConfig{Bucket: "orders", Replicas: 3})
		if _, err := kv.Put(ctx(t), "lease", []byte("1")); err != nil {
			t.Fatal(err)
		}
		st, err := kv.Status(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		info := st.(*jetstream.KeyValueBucketStatus).StreamInfo()
		if info.Config.Replicas != 3 || info.Cluster == nil || len(info.Cluster.Replicas) != 2 {
			t.Fatalf("bucket is not R3 across the cluster: %+v", info.Cluster)
		}

		// Losing the meta leader: another member takes over and the bucket
		// keeps working; the member comes back on its address.
		old := c.MetaLeader()
		c.Servers()[old].Shutdown()
		if got := len(c.URLs()); got != 2 {
			t.Fatalf("URLs has %d entries with a member down, want 2", got)
		}
		natstest.WaitFor(t, 10*time.Second, func() bool {
			l := c.MetaLeader()
			return l >= 0 && l != old
		}, "no new meta leader after n%d stopped", old)
		natstest.WaitFor(t, 10*time.Second, func() bool {
			_, err := kv.Put(ctx(t), "lease", []byte("2"))
			return err == nil
		}, "bucket not writable after losing a member")
		if err := c.Servers()[old].Restart(); err != nil {
			t.Fatal(err)
		}
		if got := len(c.URLs()); got != 3 {
			t.Fatalf("URLs has %d entries after the restart, want 3", got)
		}
	})
	for _, d := range dirs {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("store dir %s left after cleanup: %v", d, err)
		}
	}
}

func TestStartClusterRejectsSizeBelowOne(t *testing.T) {
	if _, err := clustertest.StartCluster(0); err == nil {
		t.Fatal("StartCluster(0) succeeded")
	}
}
