package sim

import "time"

// request sends a request effect to the server. It is lost if the node
// is cut off when it is sent or when it arrives; its answer is lost if
// the node is cut off by then, or (rarely) dropped. The node sees a
// timeout after the request's timeout on its own clock when no answer
// came: a write may have landed all the same.
func (p *proc) request(e Effect) {
	w := p.w
	id, timeout := requestID(e)
	gen, part := p.gen, p.partGen
	answered := false
	answer := func(r Result) {
		if answered || p.gen != gen {
			return
		}
		answered = true
		if r.inc != 0 {
			p.knownInc = r.inc // the store learns the identity with the answer
		}
		p.deliver(r)
	}
	if _, ok := e.(Watch); ok {
		p.watch = nil // the old watch's entries must not reach the logic
	}
	w.at(w.now+time.Duration(float64(timeout)/p.rate), func() { answer(Result{ID: id, Kind: ResultTimeout}) })
	if !p.connected {
		return
	}
	w.at(w.now+w.delay(p), func() {
		if p.partGen != part || !p.connected {
			return
		}
		r := p.serve(e)
		r.ID = id
		if w.rnd.IntN(50) == 0 {
			w.logf("%s: answer to request %d dropped", p.cfg.ID, id)
			return
		}
		w.at(w.now+w.delay(p), func() {
			if p.partGen == part {
				answer(r)
			}
		})
	})
}

func requestID(e Effect) (uint64, time.Duration) {
	switch e := e.(type) {
	case Write:
		return e.ID, e.Timeout
	case Get:
		return e.ID, e.Timeout
	case History:
		return e.ID, e.Timeout
	case Incarnation:
		return e.ID, e.Timeout
	case Watch:
		return e.ID, e.Timeout
	}
	return 0, 0
}

// serve is the server's side of a request, at its arrival.
func (p *proc) serve(e Effect) Result {
	w := p.w
	if w.kv.deleted {
		w.logf("%s: request %T: bucket not found", p.cfg.ID, e)
		return Result{Kind: ResultBucketDeleted}
	}
	switch e := e.(type) {
	case Write:
		var rev uint64
		var kind ResultKind
		if e.Create {
			rev, kind = w.kv.create(e.Value)
		} else {
			rev, kind = w.kv.update(e.Value, e.Rev)
		}
		w.logf("%s: %s", p.cfg.ID, describeWrite(e, rev, kind))
		if kind == ResultOK {
			p.wroteAt, p.wroteWhen = rev, w.now
			w.epochs[recordEpoch(e.Value)] = true
			w.entryAdded()
			if e.Create {
				w.maybeRawPurgeAfterCreate()
			}
		}
		return Result{Kind: kind, Rev: rev}
	case Get:
		if ent, ok := w.kv.get(); ok {
			return Result{Entry: ent}
		}
		return Result{Kind: ResultNotFound}
	case History:
		return Result{History: w.kv.historyEntries()}
	case Incarnation:
		return Result{Recreated: p.knownInc != w.kv.inc, LastSeq: w.kv.seq, Created: w.kv.createdAt, inc: w.kv.inc}
	case Watch:
		p.openWatch()
	}
	return Result{}
}

// openWatch starts a watch (server side): the key's current entry, then
// the end of the initial values, then every new entry.
func (p *proc) openWatch() {
	w := p.w
	if !p.connected {
		return
	}
	// scheduled until the first delivery: an entry written meanwhile must
	// not overtake the current one (a watch delivers in order).
	wt := &watcher{p: p, last: w.kv.seq, scheduled: true}
	p.watch = wt
	gen := p.gen
	cur, ok := w.kv.last()
	w.at(w.now+w.delay(p), func() {
		wt.scheduled = false
		if p.gen != gen || p.watch != wt {
			return
		}
		if ok {
			wt.deliver(cur)
		}
		p.deliver(Synced{})
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
		ent, ok := p.w.kv.after(wt.last)
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
func (wt *watcher) deliver(ent Entry) {
	if ent.Rev <= wt.delivered {
		wt.p.w.chk.violate(wt.p.w.now, "model: %s's watch delivered revision %d after %d", wt.p.cfg.ID, ent.Rev, wt.delivered)
	}
	wt.delivered = ent.Rev
	wt.p.deliver(EntryEvent{Entry: ent})
}
