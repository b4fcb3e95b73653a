package sim

// A server behind on a bucket deleted or created again (a "zombie"): cut
// off while the bucket's stream was deleted (and created again), it keeps
// its copy of the old stream until its meta state catches up, and answers
// stream info for it and serves watches from it; a write sent through it
// goes to the current stream's leader (internal/natstest,
// TestARejoiningServerAnswersForTheStreamDeletedWhileItWasCutOff: the copy
// took no write). A stream of its own, so that every other draw of a seed
// stays as it was.

import (
	"github.com/ozanturksever/go-cluster/internal/election"
	"math/rand/v2"
	"time"
)

const zombieName = "zombie"

// stale is the copy of the incarnation before the current one that a
// server behind keeps, until.
type stale struct {
	kv    *kv
	until time.Duration
}

// newZombies draws whether this seed has servers behind, and their stream.
func newZombies(seed uint64, opt Options) (*rand.Rand, bool) {
	r := rand.New(rand.NewPCG(seed, 0x20b1e))
	return r, r.IntN(2) == 0 && !opt.excluded(zombieName)
}

// incarnationEnds notes that the bucket is about to be deleted or created
// again: for up to 3 s a server behind answers for the incarnation that
// ends (the natstest window was seconds: until the server hears the meta
// leader), and not past the moment every fault stops.
func (w *world) incarnationEnds() {
	w.ceilingUnreadFrom()
	if !w.zombie || w.kv.deleted {
		return
	}
	cp := *w.kv
	cp.entries = append([]election.KVEntry(nil), w.kv.entries...)
	w.stale = &stale{kv: &cp, until: min(w.now+time.Duration(w.zombies.Int64N(int64(3*time.Second))), w.quietAt)}
	w.logf("a server is behind: it answers for incarnation %d until %.6fs", cp.inc, w.stale.until.Seconds())
}

// behind is the stale copy a request that reads (a Confirm, a Watch)
// reaches now, or nil: while a server is behind, half of them reach it.
func (w *world) behind() *kv {
	if w.stale == nil || w.now >= w.stale.until || w.zombies.IntN(2) != 0 {
		return nil
	}
	return w.stale.kv
}
