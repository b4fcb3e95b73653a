package sim

// The bucket's LeaseTTL changed on a live cluster, as `go-cluster init
// --lease-ttl` does (docs/design.md §2.7). A stream of its own, so
// that every other draw of a seed stays as it was.

import (
	"math/rand/v2"
	"time"
)

const ttlChangeName = "ttl-change"

// scheduleTTLChanges changes the bucket's lease_ttl now and then during
// the fault phase, within the nodes' own TTLs (the liveness bound counts
// from those), and raises lease_ttl_max with it: it never goes down.
func (w *world) scheduleTTLChanges() {
	if w.excluded(ttlChangeName) {
		return
	}
	r := rand.New(rand.NewPCG(w.seed, 0x7711))
	if r.IntN(2) == 0 {
		return
	}
	lo, hi := w.ttls[0], w.ttls[0]
	for _, t := range w.ttls {
		lo, hi = min(lo, t), max(hi, t)
	}
	for t := time.Duration(r.Int64N(int64(2 * time.Second))); t < w.quietAt; t += 500*time.Millisecond + time.Duration(r.Int64N(int64(4*time.Second))) {
		ttl := lo + time.Duration(r.Int64N(int64(hi-lo)+1)).Round(100*time.Millisecond)
		w.at(t, func() {
			w.kv.ttl, w.kv.maxTTL, w.durable = ttl, max(w.kv.maxTTL, ttl), max(w.durable, ttl)
			w.logf("OUT OF BAND: the bucket's lease_ttl set to %v (lease_ttl_max %v)", ttl, w.kv.maxTTL)
		})
	}
}
