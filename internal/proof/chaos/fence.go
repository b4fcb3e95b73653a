package chaos

import (
	"fmt"
	"sync"
	"time"
)

// Fence is a fenced resource: it accepts a write only when the write's epoch
// is at least the highest epoch it has accepted. It is what the application
// behind a leader protects with the epoch ValidateLeadership returns.
//
// Besides accepting and refusing, it checks that one epoch is only ever used
// by one tenure, and it replays stale writes: every tenure that ended
// registers its epoch and end time with Zombie, and as soon as a tenure that
// started after that end writes, the Fence tries a write with the old epoch,
// as a stale leader that woke up late would. The successor wrote first, so
// that stale write must be refused; it is accepted only if the successor's
// epoch was not higher, and the Fence records a violation.
type Fence struct {
	mu       sync.Mutex
	highest  int64
	by       string
	owner    map[int64]string // epoch -> tenure that wrote with it
	accepted int
	refused  int
	zombies  []zombie
	stale    int // zombie writes tried (all must be refused)
	viol     []string
	shared   map[[2]string]bool // pairs of tenures already reported sharing an epoch
}

type zombie struct {
	tenure string
	end    time.Time
	epoch  int64
}

// NewFence returns an empty Fence.
func NewFence() *Fence { return &Fence{owner: map[int64]string{}, shared: map[[2]string]bool{}} }

// Write offers a write carrying epoch from tenure (a name unique per
// tenure) that started at start. It reports whether the write was accepted,
// and the highest epoch and its tenure when it was not.
func (f *Fence) Write(tenure string, start time.Time, epoch int64) (ok bool, highest int64, by string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ok, highest, by = f.writeLocked(tenure, epoch)
	f.replayLocked(tenure, start)
	return ok, highest, by
}

func (f *Fence) writeLocked(tenure string, epoch int64) (bool, int64, string) {
	if epoch < f.highest {
		f.refused++
		return false, f.highest, f.by
	}
	if o, seen := f.owner[epoch]; seen && o != tenure {
		// Once per pair: the two may take turns writing for a while.
		pair := [2]string{min(o, tenure), max(o, tenure)}
		if !f.shared[pair] {
			f.shared[pair] = true
			f.viol = append(f.viol, fmt.Sprintf("epoch %d used by two tenures: %s and %s", epoch, o, tenure))
		}
	}
	f.owner[epoch] = tenure
	f.highest, f.by = epoch, tenure
	f.accepted++
	return true, epoch, tenure
}

// Zombie registers the epoch of a tenure that ended at end. Once a tenure
// that started after end has written, the Fence tries one write with it.
func (f *Fence) Zombie(tenure string, end time.Time, epoch int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.zombies = append(f.zombies, zombie{tenure: tenure, end: end, epoch: epoch})
}

// replayLocked tries the stale write of every zombie that ended before the
// tenure that just wrote (writer, started at start) began.
func (f *Fence) replayLocked(writer string, start time.Time) {
	keep := f.zombies[:0]
	for _, z := range f.zombies {
		if z.tenure == writer || !start.After(z.end) {
			keep = append(keep, z)
			continue
		}
		f.stale++
		if ok, _, _ := f.writeLocked(z.tenure, z.epoch); ok {
			f.viol = append(f.viol, fmt.Sprintf("stale write of %s with epoch %d accepted after its successor %s wrote (highest epoch then %d)",
				z.tenure, z.epoch, writer, f.highest))
		}
	}
	f.zombies = keep
}

// FenceStats is what a Fence counted.
type FenceStats struct {
	Accepted    int   // writes accepted
	Refused     int   // writes refused (stale replays included)
	StaleWrites int   // stale writes replayed for ended tenures after a successor wrote (each must be refused)
	Highest     int64 // highest epoch accepted
}

// Stats returns the counts so far.
func (f *Fence) Stats() FenceStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return FenceStats{Accepted: f.accepted, Refused: f.refused, StaleWrites: f.stale, Highest: f.highest}
}

// Violations returns what the Fence found wrong.
func (f *Fence) Violations() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.viol...)
}
