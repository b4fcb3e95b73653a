package sim

import (
	"time"

	"github.com/ozanturksever/go-cluster/internal/election"
)

// request sends a request action to the server. It is lost if the node
// is cut off when it is sent or when it arrives; its answer is lost if
// the node is cut off by then, or (rarely) dropped. The node sees a
// timeout after the request's timeout on its own clock when no answer
// came: a write may have landed all the same.
func (p *proc) request(e election.Action) { p.send(e, p.deliver) }

// send sends the request e; then takes its answer, or its timeout.
func (p *proc) send(e election.Action, then func(election.Event)) {
	w := p.w
	id, timeout := requestID(e)
	gen, part := p.gen, p.partGen
	answered := false
	answer := func(r election.Event) {
		if answered || p.gen != gen {
			return
		}
		answered = true
		then(r)
	}
	if _, ok := e.(election.Watch); ok {
		p.watch = nil // the old watch's entries must not reach the logic
	}
	w.at(w.now+time.Duration(float64(timeout)/p.rate), func() { answer(timedOut(e)) })
	if !p.connected {
		return
	}
	w.at(w.now+w.delay(p), func() {
		if p.partGen != part || !p.connected {
			return
		}
		r := p.serve(e)
		if w.rnd.IntN(50) == 0 {
			w.logf("%s: answer to request %d dropped", p.cfg.NodeID, id)
			return
		}
		w.at(w.now+w.delay(p), func() {
			if p.partGen == part {
				answer(r)
			}
		})
	})
}

func requestID(e election.Action) (uint64, time.Duration) {
	switch e := e.(type) {
	case election.Write:
		return e.ID, e.Timeout
	case election.Confirm:
		return e.ID, e.Timeout
	case election.Watch:
		return e.ID, e.Timeout
	}
	return 0, 0
}

// serve is the server's side of a request, at its arrival, as the
// driver carries it out (docs/design.md §1.4, C3): a Create is published
// with the stream's expected last sequence and the key's (0: no entry,
// a marker included), an update with the key's expected last sequence;
// a Confirm reads the stream's info; a Watch opens a new watch.
func (p *proc) serve(e election.Action) election.Event {
	w := p.w
	if z := w.readsBehind(e); z != nil {
		w.logf("%s: request %T answered by a server behind, for incarnation %d", p.cfg.NodeID, e, z.inc)
		if c, ok := e.(election.Confirm); ok {
			return w.confirmAnswer(p, c, w.info(z))
		}
		p.openWatch(z)
		return election.WatchStarted{ID: e.(election.Watch).ID}
	}
	if w.kv.deleted {
		w.logf("%s: request %T: bucket not found", p.cfg.NodeID, e)
		return bucketGone(e)
	}
	switch e := e.(type) {
	case election.Write:
		var rev uint64
		var ok bool
		over, _ := w.kv.last()
		switch {
		case e.Create && w.kv.seq != e.LastSeq:
			// the stream moved since the writer read its last sequence (C3)
		case e.Create:
			rev, ok = w.kv.create(e.Value)
		default:
			rev, ok = w.kv.update(e.Value, e.Rev)
		}
		w.logf("%s: %s", p.cfg.NodeID, describeWrite(e, rev, ok))
		if !ok {
			return conflict(e.ID)
		}
		w.entryAdded()
		w.landed(p, over, e.Value)
		if e.Create {
			w.maybeRawPurgeAfterCreate()
		}
		return election.WriteResult{ID: e.ID, Rev: rev}
	case election.Confirm:
		return w.confirmAnswer(p, e, w.info(w.kv))
	case election.Watch:
		p.openWatch(w.kv)
		return election.WatchStarted{ID: e.ID}
	}
	return nil
}

// readsBehind is the stale copy a Confirm or a Watch reaches, or nil.
func (w *world) readsBehind(e election.Action) *kv {
	switch e.(type) {
	case election.Confirm, election.Watch:
		return w.behind()
	}
	return nil
}

// openWatch starts a watch (server side) on src: the key's current entry,
// then the end of the initial values, then every new entry.
func (p *proc) openWatch(src *kv) {
	w := p.w
	if !p.connected {
		return
	}
	// scheduled until the first delivery: an entry written meanwhile must
	// not overtake the current one (a watch delivers in order).
	wt := &watcher{p: p, last: src.seq, scheduled: true, src: src}
	p.watch = wt
	gen := p.gen
	cur, ok := src.last()
	w.at(w.now+w.delay(p), func() {
		wt.scheduled = false
		if p.gen != gen || p.watch != wt {
			return
		}
		if ok {
			wt.deliver(cur)
		}
		p.deliver(election.Synced{})
		wt.schedule()
	})
}

// entryAdded wakes every watch: a new entry of the lease key.
func (w *world) entryAdded() {
	for _, p := range w.procs {
		if p.up && p.watch != nil {
			p.watch.schedule()
		}
	}
}

// schedule delivers the watch's next entry after a network delay.
func (wt *watcher) schedule() {
	p := wt.p
	if wt.scheduled || !p.connected {
		return
	}
	wt.scheduled = true
	gen := p.gen
	p.w.at(p.w.now+p.w.delay(p), func() {
		wt.scheduled = false
		if p.gen != gen || p.watch != wt || !p.connected {
			return
		}
		ent, ok := wt.src.after(wt.last)
		if !ok {
			return
		}
		wt.last = ent.Rev
		wt.deliver(ent)
		if p.watch == wt {
			wt.schedule()
		}
	})
}

// deliver hands the watch's next entry to the node. The model checks
// itself: a watch that delivered out of order would fail seeds for what
// NATS never does (seed 249836 did: an entry written just after the
// watch opened overtook the current one).
func (wt *watcher) deliver(ent election.KVEntry) {
	if ent.Rev <= wt.delivered {
		wt.p.w.chk.violate(wt.p.w.now, "model: %s's watch delivered revision %d after %d", wt.p.cfg.NodeID, ent.Rev, wt.delivered)
	}
	wt.delivered = ent.Rev
	wt.p.deliver(election.Entry{KV: ent})
}

// info is the answer of a Confirm that reads k: the members bucket's
// ceiling with it, which no server behind on the bucket's stream
// changes.
func (w *world) info(k *kv) election.Incarnation {
	b := k.info(w.now)
	b.ClusterMaxTTL, b.MembersSpeak = w.durable, w.membersSpeak()
	return b
}
