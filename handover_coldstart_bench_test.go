package cluster

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// BenchmarkColdStart measures what the absent-key rule (docs/design.md
// §5.3, rule 16) costs a start, from Start to leading, with LeaseTTL 1s,
// for a node that remembers no epoch:
//
//   - new-bucket: the node creates the bucket. Nothing tells it from one
//     deleted a moment ago under a cut-off leader, so it waits LeaseTTL
//     less the bucket's age: a full LeaseTTL.
//
//   - old-empty-bucket: the bucket was created a LeaseTTL before and nothing
//     was ever written to it: the node leads at once.
//
//   - after-clean-stop: a node led and stopped, releasing the lease; a
//     fresh node starts on the bucket.
//
//     go test -run '^$' -bench ColdStart -benchtime 5x .
func BenchmarkColdStart(b *testing.B) {
	srv := natstest.RunServer(b)
	for _, tc := range []struct {
		name    string
		prepare func(b *testing.B, id string)
	}{
		{"new-bucket", func(*testing.B, string) {}},
		{"old-empty-bucket", func(b *testing.B, id string) {
			openKV(b, srv.URL(), id)
			time.Sleep(testTTL) // the bucket's age is the point here
		}},
		{"after-clean-stop", func(b *testing.B, id string) {
			n := startLeader(b, testConfig(id, "first", srv.URL()))
			if err := n.Stop(context.Background()); err != nil {
				b.Fatal(err)
			}
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var total time.Duration
			i := 0
			for b.Loop() {
				i++
				id := fmt.Sprintf("cold%d%d", time.Now().UnixNano()%1e9, i)
				tc.prepare(b, id)
				n, err := NewNode(testConfig(id, "a", srv.URL()), nil)
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				if err := n.Start(context.Background()); err != nil {
					b.Fatal(err)
				}
				natstest.WaitFor(b, 10*time.Second, n.IsLeader, "no leader")
				total += time.Since(start)
				_ = n.Stop(context.Background())
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(i), "ms/start-to-lead")
		})
	}
}

// startLeader starts a node and waits until it leads.
func startLeader(b *testing.B, cfg Config) *Node {
	n, err := NewNode(cfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := n.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	natstest.WaitFor(b, 10*time.Second, n.IsLeader, "no leader")
	return n
}
