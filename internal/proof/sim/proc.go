package sim

import (
	"fmt"
	"math"
	"time"

	"github.com/ozanturksever/go-cluster/internal/election"
)

// base is the origin of every node's clock: what the clock shows at
// simulated time 0 (plus the node's offset).
var base = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// proc is one node's process: its logic, clock, connection, watch and
// hook dispatcher. A crash forgets all of it but the configuration.
type proc struct {
	w      *world
	cfg    election.Params
	logic  logic
	up     bool
	gen    uint64 // process incarnation: events of an earlier one are dropped
	offset time.Duration
	rate   float64 // local seconds per real second

	paused   bool
	pausedAt time.Duration
	inbox    []election.Event // events that arrived while paused

	connected  bool
	partGen    uint64 // bumped by every partition: requests in flight are lost
	reconnects uint64
	slow       bool
	watch      *watcher
	needWatch  bool // started while cut off: Start's watch opens at reconnect
	timerGen   uint64
	hooksFree  time.Duration // the dispatcher is busy until then
	failed     error         // the permanent error the logic reported (Finished.Err)
	nextHi     int           // the version a replacement speaks from the next start (upgrade.go); 0: none
}

// watcher is a watch on the lease key: it delivers the key's entries
// above last, in order, while the node is connected.
type watcher struct {
	p         *proc
	last      uint64
	delivered uint64 // the revision of the last entry delivered
	scheduled bool
	src       *kv // the stream it reads: the bucket, or a stale copy a server behind keeps
}

func (w *world) makeProcs() {
	n := 2 + w.rnd.IntN(4)
	mixed := (w.opt.MixedTTL || w.rnd.IntN(3) == 0) && !w.opt.SameTTL
	w.slowNet = w.rnd.IntN(2) == 0
	for i := 0; i < n; i++ {
		ttl := time.Second
		if mixed && i%2 == 1 {
			ttl = 3 * time.Second
		}
		// DrainTimeout and Cooldown: cluster.Config's defaults.
		cfg := election.Params{NodeID: fmt.Sprintf("n%d", i+1), LeaseTTL: ttl, RenewInterval: ttl / 4,
			SafetyMargin: ttl / 10, RequestTimeout: ttl / 4, DrainTimeout: ttl, Cooldown: ttl}
		if w.opt.MarginZero {
			cfg.SafetyMargin = 0
		}
		if i == 0 && w.rnd.IntN(3) == 0 {
			cfg.Priority = 1 // a preferred node: it asks lower ones to hand over
		}
		drift := (w.rnd.Float64()*2 - 1) * w.opt.DriftBound
		p := &proc{w: w, cfg: cfg, rate: 1 + drift, offset: time.Duration(w.rnd.Int64N(int64(time.Hour))), connected: true}
		w.procs = append(w.procs, p)
		w.ttls = append(w.ttls, ttl)
	}
}

// local is the node's clock at simulated time t.
func (p *proc) local(t time.Duration) time.Time {
	return base.Add(p.offset + time.Duration(float64(t)*p.rate))
}

// real is the simulated time at which the node's clock shows at,
// rounded up.
func (p *proc) real(at time.Time) time.Duration {
	return time.Duration(math.Ceil(float64(at.Sub(base)-p.offset)/p.rate)) + 1
}

// start runs a fresh process: it opens the bucket and starts its watch,
// as the driver does before the machine's Start (whose watch is the one
// the machine's first Watch action replaces).
func (p *proc) start() {
	w := p.w
	p.gen++
	p.up, p.paused, p.inbox, p.hooksFree, p.failed = true, false, nil, 0, nil
	if w.kv.deleted {
		w.createBucket(p) // Start creates a bucket it does not find
	}
	p.replaced()
	p.logic = w.factory(p.cfg, w.seed*1000+p.gen*10+uint64(len(p.cfg.NodeID)))
	w.logf("%s: start (last seq %d, bucket age %v)", p.cfg.NodeID, w.kv.seq, w.now-w.kv.created)
	w.chk.procStarted(p)
	w.announce(p)
	p.needWatch = !p.connected
	p.openWatch(w.kv)
	p.deliver(election.Start{})
	p.deliver(election.Conn{Connected: p.connected, Reconnects: p.reconnects})
}

// crash ends the process: it forgets everything.
func (p *proc) crash(why string) {
	if !p.up {
		return
	}
	p.w.logf("%s: %s", p.cfg.NodeID, why)
	p.up, p.logic, p.watch, p.inbox = false, nil, nil, nil
	p.timerGen++
	p.w.chk.procEnded(p)
}

// deliver hands ev to the logic now (or at resume, if paused).
func (p *proc) deliver(ev election.Event) {
	if !p.up {
		return
	}
	if p.paused {
		p.inbox = append(p.inbox, ev)
		return
	}
	actions := p.logic.Handle(p.local(p.w.now), ev)
	if p.w.opt.TraceNode == p.cfg.NodeID {
		p.w.logf("%s <- %s -> %s", p.cfg.NodeID, short(ev), short(actions))
	}
	for _, a := range actions {
		if !p.up {
			return
		}
		p.act(a)
	}
	if p.up {
		p.w.chk.deadline(p)
	}
}

// later delivers ev at t to this process incarnation, if it still runs.
func (p *proc) later(t time.Duration, ev election.Event) {
	gen := p.gen
	p.w.at(t, func() {
		if p.gen == gen {
			p.deliver(ev)
		}
	})
}

func (p *proc) resume() {
	if !p.paused {
		return
	}
	p.w.logf("%s: resume", p.cfg.NodeID)
	p.paused = false
	p.w.chk.resumed(p, p.pausedAt, p.w.now)
	inbox := p.inbox
	p.inbox = nil
	for _, ev := range inbox {
		p.deliver(ev)
	}
}

// act carries out one action of the logic.
func (p *proc) act(a election.Action) {
	w := p.w
	switch e := a.(type) {
	case election.Arm:
		p.timerGen++
		if !e.At.IsZero() {
			gen, tg := p.gen, p.timerGen
			w.at(p.real(e.At), func() {
				if p.gen == gen && p.timerGen == tg {
					p.deliver(election.Tick{})
				}
			})
		}
	case election.Write, election.Confirm, election.Watch:
		p.request(e)
	case election.Become:
		w.logf("%s: BECOME epoch %d", p.cfg.NodeID, e.Epoch)
		w.chk.become(p, e.Epoch)
		p.hook(w.dur(0, p.hookDuration()), nil, nil)
	case election.Lose:
		w.logf("%s: LOSE epoch %d", p.cfg.NodeID, e.Epoch)
		w.chk.lose(p, e.Epoch)
		began := p.hook(w.dur(0, p.hookDuration()), election.LoseHook{Epoch: e.Epoch}, election.LoseHook{Epoch: e.Epoch, Done: true})
		w.chk.loseHookBegins(p, began)
		if e.Cause == nil {
			w.chk.drained(w.now, began) // a step-down or Stop: released once its hook began
		}
	case election.AskToLead:
		w.chk.asked(p, e.Holder)
		p.ask(e)
	case election.Reply:
		w.chk.reply(p, e.Token, replied(e))
	case election.CooldownKey:
		if !w.kv.deleted {
			w.kv.seq++ // a write to another key of the stream
		}
	case election.Finished:
		p.failed = e.Err
		p.finished()
	}
}

// hookDuration is how long a hook may run: mostly short, sometimes slow.
func (p *proc) hookDuration() time.Duration {
	if p.w.rnd.IntN(10) == 0 {
		return 2 * p.cfg.LeaseTTL
	}
	return 20 * time.Millisecond
}

// hook queues a hook of duration d on the dispatcher; started and done
// (may be nil) are delivered when it begins and returns. It returns when
// the hook begins.
func (p *proc) hook(d time.Duration, started, done election.Event) time.Duration {
	begin := max(p.w.now, p.hooksFree)
	p.hooksFree = begin + d
	if started != nil {
		p.later(begin, started)
	}
	if done != nil {
		p.later(begin+d, done)
	}
	return begin
}

func (p *proc) finished() {
	w := p.w
	if p.failed != nil {
		w.logf("%s: stopped by a permanent error: %v", p.cfg.NodeID, p.failed)
		w.chk.permanent(p, p.failed)
	}
	w.withdraw(p)
	p.crash("finished")
	// A Stop handled after faults stopped (it waited out a pause or a
	// partition) restarts too: the quiet phase runs every node.
	d := w.dur(10*time.Millisecond, 2*time.Second)
	if w.now >= w.quietAt {
		d = 10 * time.Millisecond
	}
	w.at(w.now+d, func() { p.restart() })
}

func (p *proc) restart() {
	if p.up {
		return
	}
	p.start()
}

// ask publishes a priority request to the holder, if both are connected.
func (p *proc) ask(e election.AskToLead) {
	w := p.w
	if !p.connected {
		return
	}
	for _, h := range w.procs {
		if h.cfg.NodeID != e.Holder || !h.connected || !h.up {
			continue
		}
		w.tokens++
		tok, gen := w.tokens, h.gen
		w.at(w.now+w.delay(p)+w.delay(h), func() {
			if h.gen == gen {
				h.deliver(election.StepDown{To: p.cfg.NodeID, Preempt: true, Priority: e.Priority, Received: h.local(w.now), Token: tok})
			}
		})
		return
	}
}
