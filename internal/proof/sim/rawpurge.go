package sim

import "time"

// Raw purges: an operator (or a tool) purges the bucket's stream by the
// lease key's subject, `nats stream purge KV_… --subject '$KV.….lease'`.
// Unlike a KV purge, it writes no marker, and the stream's last sequence
// stays: the key is simply gone. This is why a Create is checked against
// the stream's last sequence (C3): one decided on last sequence L must
// not land after another node's Create whose record a raw purge removed
// while its holder leads (docs/design.md §5.2).
//
// Half of the seeds inject them (Options.Exclude "raw-purge" turns them
// off): at random in the fault phase, and, to reach the window above,
// moments after a Create landed a third of the time. They are drawn from
// the world's purges stream, not its main one, so that a seed recorded
// before raw purges existed replays unchanged when it injects none.

// rawPurgeName is the fault kind's name, for Options.Exclude.
const rawPurgeName = "raw-purge"

// scheduleRawPurges decides whether this seed purges the key from the
// stream, and plans the random ones.
func (w *world) scheduleRawPurges() {
	w.rawPurge = w.purges.IntN(2) == 0 && !w.excluded(rawPurgeName)
	if !w.rawPurge {
		return
	}
	for t := w.purgeDur(0, 2*time.Second); t < w.quietAt; t += w.purgeDur(200*time.Millisecond, 4*time.Second) {
		w.at(t, w.rawPurgeKey)
	}
}

// maybeRawPurgeAfterCreate purges the key within 20 ms of a Create that
// landed, a third of the time, during the fault phase.
func (w *world) maybeRawPurgeAfterCreate() {
	if !w.rawPurge || w.now >= w.quietAt || w.purges.IntN(3) != 0 {
		return
	}
	w.at(min(w.now+w.purgeDur(0, 20*time.Millisecond), w.quietAt), w.rawPurgeKey)
}

// rawPurgeKey removes the key's entries from the stream.
func (w *world) rawPurgeKey() {
	if w.kv.deleted || w.now >= w.quietAt {
		return
	}
	w.kv.rawPurge()
	w.logf("OUT OF BAND: raw purge of the key from the stream (no marker; seq stays %d)", w.kv.seq)
}

func (w *world) purgeDur(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(w.purges.Int64N(int64(hi-lo)+1))
}
