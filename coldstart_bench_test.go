package cluster

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// BenchmarkColdStart measures what the absent-key rule (docs/design.md
// §5.3) costs a first start, from Start to leading, with LeaseTTL 1s:
//
//   - new-bucket: the node creates the bucket, so the absent key was never
//     held: it leads at once;
//
//   - empty-bucket: the bucket exists without a lease (made by another tool,
//     or its creator crashed), and the node remembers no epoch: it waits
//     2 x LeaseTTL + RenewInterval before writing the key.
//
//     go test -run '^$' -bench ColdStart -benchtime 5x .
func BenchmarkColdStart(b *testing.B) {
	srv := natstest.RunServer(b)
	for _, tc := range []struct {
		name    string
		preMake bool
	}{{"new-bucket", false}, {"empty-bucket", true}} {
		b.Run(tc.name, func(b *testing.B) {
			var total time.Duration
			i := 0
			for b.Loop() {
				i++
				id := fmt.Sprintf("cold%s%d%d", tc.name[:3], time.Now().UnixNano()%1e6, i)
				if tc.preMake {
					openKV(b, srv.URL(), id)
				}
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
