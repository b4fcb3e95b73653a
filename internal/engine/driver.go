// Package driver runs the election machine (internal/election) of one
// node: a loop that turns what happens into the machine's events and
// carries out the actions it returns, the live tenure and its hooks, and
// the view the node's queries read. Package cluster holds a Driver and
// calls only its entry points: New, Run, Send, Close, Wait and the view's
// methods; the store (internal/store) does the I/O the machine asks for.
package engine

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/ozanturksever/go-cluster/internal/election"
	"github.com/ozanturksever/go-cluster/internal/store"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// driver runs the election machine (internal/election) of one Node: a goroutine
// that turns what happens (watch entries, timers, answers from NATS, API
// calls, control requests, readiness results, advisories) into the
// machine's events, and carries out the actions the machine returns. It
// makes no decision of its own.
//
// Clock model: the driver hands the machine this process's monotonic
// clock (time.Now). A follower takes over a held lease only after seeing
// one revision unchanged for LeaseTTL; the leader stops at
// lastSuccessfulRenewalSent + LeaseTTL - SafetyMargin. The follower first
// sees a revision after it was sent, so the old leader has always stopped
// before a successor starts, without comparing clocks of different
// machines (docs/design.md §3).
//
// Requests run on goroutines of their own, one at a time (the machine has
// at most one out), and their answers come back as events; so the loop
// never blocks on NATS, and the tenure's deadline ends the tenure on time
// even while a request hangs.
type driver struct {
	cfg   driverConfig
	log   *slog.Logger
	store *store.Store
	hooks Hooks
	disp  *dispatcher
	view  *nodeView
	m     *election.Machine

	cmds    chan command
	control <-chan controlRequest // step-down requests from NATS
	health  chan error            // ReadinessCheck results
	answers chan answer           // answers to the machine's requests
	conns   chan election.Conn    // the connection's state, latest only (watchConn)
	expired chan struct{}         // the deadline timer ended the tenure (buffered, 1)
	exited  chan struct{}         // closed when run returns

	base    context.Context
	abort   context.CancelFunc // cancels base: Close
	hookCtx context.Context
	// stopHooks cancels hookCtx: StopHooks, Wait.
	stopHooks context.CancelFunc
	checks    chan struct{} // closed when the readiness checks end

	watcher  *store.LeaseWatch
	watchID  uint64         // the election.Watch whose watch is awaited; 0 for none
	cleanup  sync.WaitGroup // watches being stopped in the background: WaitWatches
	requests sync.WaitGroup // requests out, and cooldown records

	tenure    *driverTenure // the live tenure's ctx; nil when none
	expiredAt int64         // a tenure the deadline timer ended before its Extend was applied
	losing    *loseSignals  // the OnLoseLeadership last queued, until it returns
	replies   map[uint64]func(election.Reply)
	tokens    uint64
	conn      election.Conn // the connection as it was at Start
	ready     readiness     // ReadinessCheck's results
	self      foreignSelf   // records under this NodeID by another process (E14)
	timer     *time.Timer

	err      error // permanent failure
	finished bool
}

// commandKind says which call of the public API a command is.
type commandKind int

// The calls of the public API that reach the machine.
const (
	cmdStepDown commandKind = iota
	cmdStop
	cmdValidate
	cmdSetMetadata
	cmdSetPriority
)

// command is a call of the public API on its way to the driver: Send
// hands it over, and the answer comes back on Reply (and Epoch).
type command struct {
	Kind   commandKind
	Reply  chan error
	Epoch  chan int64 // cmdValidate: the proven epoch
	To     string     // cmdStepDown: preferred successor
	Tenure int64      // cmdStepDown: the tenure to end (0: the current one)
	// Metadata (cmdSetMetadata): what the node publishes from now on.
	Metadata map[string]string
	// Priority (cmdSetPriority): the node's priority from now on.
	Priority int
	// Async (cmdStepDown): reply once the step-down has begun, not when
	// the lease is released. A hook calling StepDown cannot wait for the
	// release: it waits for OnLoseLeadership, which runs after that hook.
	Async bool
}

// driverConfig is what the driver needs of its node: the election's
// parameters, the node's settings it carries out, and its parts.
type driverConfig struct {
	Params         election.Params // Priority: the priority now
	DrainTimeout   time.Duration
	RequestTimeout time.Duration
	// StepDownOnHookError ends a tenure whose OnBecomeLeader failed
	// (cluster.LeaderHookErrorStepsDown).
	StepDownOnHookError bool
	ReadinessCheck      func(context.Context) error // nil: none
	ReadinessInterval   time.Duration
	ReadinessThreshold  int // failures in a row that make the node not ready (P14)
	ClusterID           string
	Log                 *slog.Logger
	Metrics             Metrics
	Hooks               Hooks
	view                *nodeView
	Store               *store.Store
	Control             <-chan controlRequest
	// BeforeAction is nil but in tests: the loop calls it before carrying
	// out each of the machine's actions, so that a test can stall the
	// loop at a chosen point.
	BeforeAction func(election.Action)
}

// New makes the driver of a node, not yet running, over the store it
// opened, and publishes the machine's first state to the view.
func newDriver(cfg driverConfig) *driver {
	hookCtx, hookStop := context.WithCancel(context.Background())
	base, abort := context.WithCancel(context.Background())
	reconnects := cfg.Store.Conn().Stats().Reconnects
	m := election.New(cfg.Params, uint64(time.Now().UnixNano()))
	d := &driver{
		cfg:       cfg,
		log:       cfg.Log,
		store:     cfg.Store,
		hooks:     cfg.Hooks,
		disp:      newDispatcher(cfg.Log, cfg.Metrics),
		view:      cfg.view,
		m:         m,
		cmds:      make(chan command),
		control:   cfg.Control,
		health:    make(chan error),
		answers:   make(chan answer, 1),
		conns:     make(chan election.Conn, 1),
		expired:   make(chan struct{}, 1),
		exited:    make(chan struct{}),
		base:      base,
		abort:     abort,
		hookCtx:   hookCtx,
		stopHooks: hookStop,
		checks:    make(chan struct{}),
		replies:   make(map[uint64]func(election.Reply)),
		conn:      election.Conn{Connected: true, Reconnects: reconnects},
		ready:     readiness{threshold: cfg.ReadinessThreshold},
		self:      foreignSelf{nodeID: cfg.Params.NodeID, instance: cfg.Params.Instance},
	}
	d.publish()
	return d
}

// Run starts the driver: the loop, and the readiness checks if the node
// has any. It returns at once; Exited closes when the loop ends.
func (d *driver) Run() {
	go d.disp.run()
	if d.cfg.ReadinessCheck != nil {
		go func() {
			defer close(d.checks)
			runReadinessChecks(d.base, d.cfg.ReadinessCheck, d.cfg.ReadinessInterval, d.health)
		}()
	} else {
		close(d.checks)
	}
	go d.run()
}

// run is the driver's loop: one event at a time, until the machine is
// done or Close cancels base.
func (d *driver) run() {
	defer close(d.exited)
	defer d.shutdown()
	d.timer = time.NewTimer(time.Hour)
	defer d.timer.Stop()
	d.requests.Add(1)
	go d.watchConn(d.store.Conn().StatusChanged())
	d.feed(election.Start{})
	for !d.finished {
		if d.base.Err() != nil {
			return // Stop gave up waiting for a graceful end
		}
		started, done := d.losing.channels()
		select {
		case ent, ok := <-d.updates():
			d.onWatch(watchEvent(ent, ok))
		case <-d.timer.C:
			d.feed(election.Tick{})
		case <-d.expired:
			d.feed(election.Tick{})
		case c := <-d.conns:
			d.feed(c)
		case a := <-d.answers:
			d.onAnswer(a)
		case <-d.base.Done():
		case <-started:
			d.losing.started = nil
			d.feed(election.LoseHook{Epoch: d.losing.epoch})
		case <-done:
			epoch := d.losing.epoch
			d.losing = nil
			d.feed(election.LoseHook{Epoch: epoch, Done: true})
		case c := <-d.cmds:
			d.feed(d.commandEvent(c))
		case r := <-d.control:
			d.feed(d.controlEvent(r))
		case err := <-d.health:
			d.onCheck(err)
		}
	}
}

// updates is the watch's channel; nil (never ready) without a watch.
func (d *driver) updates() <-chan store.LeaseUpdate {
	if d.watcher == nil {
		return nil
	}
	return d.watcher.Updates()
}

// watchEvent is what the watch delivered, as the machine's event: an
// entry, the end of the initial values, or the channel closed.
func watchEvent(u store.LeaseUpdate, ok bool) election.Event {
	switch {
	case !ok:
		return election.WatchClosed{}
	case u.Synced:
		return election.Synced{}
	}
	return election.Entry{KV: u.Entry}
}

// onWatch feeds what the watch delivered; an entry that shows another
// process using this NodeID (E14) stops the machine.
func (d *driver) onWatch(ev election.Event) {
	e, entry := ev.(election.Entry)
	d.feed(ev)
	if entry && !d.cfg.Params.Observer {
		if err := d.self.note(e.KV); err != nil {
			d.feed(election.Abort{Err: err})
		}
	}
}

// feed hands the machine one event (nil: none) at this process's now,
// and carries out what it returns. The view is published first: a hook
// that carrying out queues reads the machine as it decided (E6), even
// when one event both showed the node's write and began its tenure.
func (d *driver) feed(ev election.Event) {
	if ev == nil {
		return
	}
	acts := d.m.Handle(d.view.Now(), ev)
	d.publish()
	d.carryOut(acts)
	if epoch := d.expiredAt; epoch != 0 { // extend found the tenure ended
		d.expiredAt = 0
		d.feed(election.StepDown{Epoch: epoch})
	}
}

// watchConn reports the connection's state to the loop after each change
// of its status. It reads the state here, not on the loop: the connection's
// lock is held while it writes to a socket that does not drain.
func (d *driver) watchConn(statuses chan nats.Status) {
	defer d.requests.Done()
	nc := d.store.Conn()
	defer nc.RemoveStatusListener(statuses)
	last := d.conn
	for {
		select {
		case <-statuses:
		case <-d.base.Done():
			return
		}
		c := election.Conn{Connected: nc.IsConnected(), Reconnects: nc.Stats().Reconnects}
		if c == last {
			continue
		}
		last = c
		select { // the latest state replaces one the loop has not read
		case <-d.conns:
		default:
		}
		d.conns <- c
	}
}

// carryOut does what the machine asked, in order.
func (d *driver) carryOut(acts []election.Action) {
	for _, a := range acts {
		if d.cfg.BeforeAction != nil {
			d.cfg.BeforeAction(a) // a test stalls the loop here
		}
		if !d.request(a) {
			d.carryOutLocal(a)
		}
	}
}

// request starts a request action; false if a is not one.
func (d *driver) request(a election.Action) bool {
	switch a := a.(type) {
	case election.Write:
		d.write(a)
	case election.Confirm:
		d.confirm(a)
	case election.Watch:
		d.startWatch(a)
	default:
		return false
	}
	return true
}

// carryOutLocal carries out an action that asks nothing of NATS's
// JetStream: timers, the watch's end, hooks, replies, the log.
func (d *driver) carryOutLocal(a election.Action) {
	switch a := a.(type) {
	case election.Arm:
		d.arm(a.At)
	case election.Become:
		d.become(a)
	case election.Extend:
		d.extend(a)
	case election.Lose:
		d.lose(a)
	case election.LeaderChange:
		d.leaderChanged(a.Leader)
	case election.AskToLead:
		d.askToLead(a)
	case election.CooldownKey:
		d.recordCooldown(a.Cooldown)
	case election.Reply:
		d.reply(a)
	case election.Finished:
		if a.Err != nil {
			d.log.Error("permanent error; the node stops campaigning", "error", a.Err)
			d.err = a.Err
		}
		d.finished = true
	case election.Log:
		d.log.Log(context.Background(), a.Level, a.Msg, a.Args...)
	}
}

// arm sets the timer for the machine's next look (zero: none needed).
func (d *driver) arm(at time.Time) {
	d.timer.Stop()
	wait := time.Hour
	if !at.IsZero() {
		wait = max(at.Sub(d.view.Now()), 0)
	}
	d.timer.Reset(wait)
}

// shutdown releases what run holds when it exits: if teardown cut the loop
// short, the machine still ends its tenure and answers its callers.
func (d *driver) shutdown() {
	if !d.finished {
		d.carryOut(d.m.StopNow())
		d.publish()
	}
	for token, answer := range d.replies { // every call still waiting (E9)
		delete(d.replies, token)
		answer(election.Reply{Token: token, Err: wire.ErrStopped})
	}
	d.stopWatch()
}

// newToken names a caller waiting for an election.Reply.
func (d *driver) newToken(answer func(election.Reply)) uint64 {
	d.tokens++
	if answer != nil {
		d.replies[d.tokens] = answer
	}
	return d.tokens
}

// reply answers the caller the token names.
func (d *driver) reply(a election.Reply) {
	answer, ok := d.replies[a.Token]
	if !ok {
		return
	}
	delete(d.replies, a.Token)
	answer(a)
}
