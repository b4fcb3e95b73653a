package sim

// A bucket created again with its creator's TTL: a node's Start writes its
// own LeaseTTL into a bucket it does not find, and an operator's tool
// whatever it is given, not the ceiling of the bucket deleted (the
// assumption the library's docs/design.md §2.7 made before protocol 3).
// A stream of its own, so that every other draw of a seed stays as it was.

import (
	"math/rand/v2"
	"time"
)

const creatorTTLName = "creator-ttl"

// newCreators draws whether this seed's buckets get their creator's TTL,
// and the stream that picks an operator's.
func newCreators(seed uint64, opt Options) (*rand.Rand, bool) {
	r := rand.New(rand.NewPCG(seed, 0xc7ea))
	return r, r.IntN(2) == 0 && !opt.excluded(creatorTTLName)
}

// creatorTTL is the TTL a bucket created now by creator (nil: an
// operator) gets, and whether this seed gives it one at all: otherwise
// the bucket keeps the metadata it had.
func (w *world) creatorTTL(creator *proc) (time.Duration, bool) {
	if !w.creatorTTLs {
		return 0, false
	}
	if creator != nil {
		return creator.cfg.LeaseTTL, true
	}
	return w.ttls[w.creators.IntN(len(w.ttls))], true
}
