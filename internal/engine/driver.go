package engine

// The loop: it runs the election machine (internal/election), turning what
// happens into the machine's events and carrying out the actions it
// returns; the machine's requests run against the store (internal/store).

import (
	"context"
	"errors"
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
	cfg    driverConfig
	log    *slog.Logger
	store  *store.Store
	hooks  Hooks
	events Hooks
	disp   *dispatcher
	view   *nodeView
	m      *election.Machine

	cmds    chan command
	control <-chan controlRequest // step-down requests from NATS
	health  chan error            // ReadinessCheck results
	answers chan answer           // answers to the machine's requests
	// statuses tells of the connection's status changes (nats.go drops
	// one when the channel is full: each only says "read the state").
	statuses chan nats.Status
	conns    chan election.Conn // the state a reader read (readConn; buffered, 1)
	expired  chan struct{}      // the deadline timer ended the tenure (buffered, 1)
	exited   chan struct{}      // closed when run returns

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
	conn      election.Conn // the connection's state last fed (at first, as it was at Start)
	reading   bool          // a readConn reader is out
	reread    bool          // a status change came while it was out
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
	Hooks, Events       Hooks // never nil
	view                *nodeView
	Store               *store.Store
	Control             <-chan controlRequest
	// Ended (nil: none) is called on the loop's goroutine once the loop
	// has ended, Exited closed, with the permanent error that ended it
	// (nil for a Stop): the engine's teardown starts there, with no
	// goroutine waiting for it (issue 43).
	Ended func(error)
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
		events:    cfg.Events,
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
	defer d.ended() // after Exited
	defer close(d.exited)
	defer d.shutdown()
	d.timer = time.NewTimer(time.Hour)
	defer d.timer.Stop()
	d.statuses = d.store.Conn().StatusChanged()
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
		case <-d.statuses:
			d.readConn()
		case c := <-d.conns:
			d.onConn(c)
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

// ended tells the engine the loop has ended (driverConfig.Ended).
func (d *driver) ended() {
	if d.cfg.Ended != nil {
		d.cfg.Ended(d.err)
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

// readConn reads the connection's state after a change of its status, on
// a goroutine of its own, not on the loop: the connection's lock is held
// while it writes to a socket that does not drain. One reader at a time,
// so that states arrive in order; a change while one is out is read once
// it is back. No goroutine waits between changes (issue 43).
func (d *driver) readConn() {
	if d.reading {
		d.reread = true
		return
	}
	d.reading = true
	nc := d.store.Conn()
	d.requests.Add(1)
	go func() {
		defer d.requests.Done()
		c := election.Conn{Connected: nc.IsConnected(), Reconnects: nc.Stats().Reconnects}
		select {
		case d.conns <- c: // room: the loop has read the reader before
		case <-d.base.Done():
		}
	}()
}

// onConn feeds the state a reader read, if it changed, after sending the
// next reader out when a change came meanwhile.
func (d *driver) onConn(c election.Conn) {
	d.reading = false
	if d.reread {
		d.reread = false
		d.readConn()
	}
	if c == d.conn {
		return
	}
	d.conn = c
	d.feed(c)
}

// stopStatuses stops the connection's status changes, on a goroutine
// counted in requests: unregistering takes the connection's lock.
func (d *driver) stopStatuses() {
	if d.statuses == nil {
		return
	}
	nc, statuses := d.store.Conn(), d.statuses
	d.requests.Add(1)
	go func() {
		defer d.requests.Done()
		nc.RemoveStatusListener(statuses)
	}()
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
	d.stopStatuses()
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

// The driver's requests: each request action of the machine (Write,
// Confirm, Watch) runs on a goroutine of its own against the store,
// bounded by the action's timeout, and its answer comes back to the loop
// as the request's own result event.

// answer is a request's result on its way to the loop, with what the
// loop does besides handing it to the machine.
type answer struct {
	ev      election.Event    // WriteResult, ConfirmResult or WatchStarted
	id      uint64            // the request's
	write   *election.Write   // a write: its purpose, for the log and the metrics
	sent    time.Time         // a write's send time
	err     error             // the request's error, for the log
	watcher *store.LeaseWatch // election.Watch: the watch made
}

// ask runs do as the request id on a goroutine of its own.
func (d *driver) ask(id uint64, timeout time.Duration, do func(ctx context.Context) answer) {
	d.requests.Add(1)
	go func() {
		defer d.requests.Done()
		ctx, cancel := context.WithTimeout(d.base, timeout)
		a := do(ctx)
		cancel()
		a.id = id
		select {
		case d.answers <- a:
		case <-d.base.Done():
			if a.watcher != nil {
				a.watcher.Stop(&d.cleanup)
			}
		}
	}()
}

// write writes the lease key: a Create checked against the stream's last
// sequence, a CAS on a.Rev, or, for a renewal, the CAS that never spends
// its time on telling a deleted bucket from a slow one (store.renew). A
// replicated stream refuses any of them while a fenced state write checked
// on the lease is in flight, without comparing anything (E-rules in
// docs/design.md): each is asked again, within the same time.
func (d *driver) write(a election.Write) {
	sent := d.view.Now()
	if a.Purpose == election.Renew {
		d.view.renewalStarted() // fenced state writes hold back meanwhile
	}
	d.ask(a.ID, a.Timeout, func(ctx context.Context) answer {
		try := func() (uint64, error) {
			switch {
			case a.Purpose == election.Renew:
				return d.store.Renew(ctx, wire.LeaseKey, a.Value, a.Rev)
			case a.Create:
				return d.store.Create(ctx, wire.LeaseKey, a.Value, a.LastSeq)
			default:
				return d.store.Update(ctx, wire.LeaseKey, a.Value, a.Rev)
			}
		}
		rev, err := try()
		for attempt := 1; store.InFlightRefusal(err) && store.Pause(ctx, attempt) == nil; attempt++ {
			rev, err = try()
		}
		err = store.Tidy(err)
		r := election.WriteResult{ID: a.ID, Rev: rev, Err: err, Class: writeClass(a, err)}
		return answer{ev: r, write: &a, sent: sent, err: err}
	})
}

// writeClass is what the answer err to the lease write a means to the
// machine. A renewal still refused with 10164 when its time is up was
// never compared (E11): a fenced state write on the lease stayed in flight
// that long, the cluster slow to commit it, and nobody else wrote the
// lease. It is a renewal without a verdict, retried at once, not a lost
// compare-and-swap, which would renew nothing until the watch explained it
// (P10). An acquisition refused so is a race lost to a write in flight.
func writeClass(a election.Write, err error) election.ErrClass {
	if a.Purpose == election.Renew && store.InFlightRefusal(err) {
		return election.Transient
	}
	return store.Classify(err)
}

// confirm reads the bucket's stream info (store.Confirm).
func (d *driver) confirm(a election.Confirm) {
	d.ask(a.ID, a.Timeout, func(ctx context.Context) answer {
		inc, err := d.store.Confirm(ctx)
		err = store.Tidy(err)
		r := election.ConfirmResult{ID: a.ID, Bucket: inc, Err: err, Class: store.Classify(err)}
		return answer{ev: r, err: r.Err}
	})
}

// startWatch drops the watch and starts a new one; its entries reach the
// machine once the answer is in.
func (d *driver) startWatch(a election.Watch) {
	d.stopWatch()
	d.watchID = a.ID
	d.ask(a.ID, a.Timeout, func(ctx context.Context) answer {
		timeout := a.Timeout
		if dl, ok := ctx.Deadline(); ok {
			timeout = dl.Sub(d.view.Now())
		}
		w, err := d.store.Watch(d.base, timeout)
		err = store.Tidy(err)
		return answer{ev: election.WatchStarted{ID: a.ID, Err: err, Class: store.Classify(err)}, watcher: w, err: err}
	})
}

// stopWatch drops the watch without waiting for the network: the clean-up
// goes on in the background, counted in d.cleanup for teardown.
func (d *driver) stopWatch() {
	d.watchID = 0
	if d.watcher != nil {
		d.watcher.Stop(&d.cleanup)
		d.watcher = nil
	}
}

// onAnswer hands an answer to the machine, after what the driver does
// with it: the watch made, the renewal's end and metrics, the log, the
// bucket a Confirm read (E14).
func (d *driver) onAnswer(a answer) {
	if w := a.watcher; w != nil {
		if a.id == d.watchID {
			d.watcher = w
		} else {
			w.Stop(&d.cleanup) // the machine dropped that watch meanwhile
		}
	}
	if w := a.write; w != nil {
		d.noteWrite(w, a.sent, a.err)
	} else if a.err != nil && a.id == d.watchID {
		d.log.Warn("lease watch failed; retrying", "error", a.err)
	}
	d.noteBucket(a.ev)
	d.feed(a.ev)
}

// noteWrite logs a write's outcome and records a renewal's metrics.
func (d *driver) noteWrite(w *election.Write, sent time.Time, err error) {
	switch w.Purpose {
	case election.Renew:
		d.view.renewalEnded()
		d.cfg.Metrics.ObserveRenewal(renewalOutcome(err), d.view.Now().Sub(sent))
		switch {
		case err == nil || writeClass(*w, err) != election.Transient:
		case store.InFlightRefusal(err):
			d.log.Warn("renewal refused until its time was up: another write on the lease was in flight; retrying until the lease deadline", "error", err)
		default:
			d.log.Warn("renewal failed; retrying until the lease deadline", "error", err)
		}
	case election.Acquire:
		switch {
		case err == nil:
		case store.Classify(err) == election.Conflict:
			d.log.Debug("lost the race for the lease", "revision", w.Rev)
		default:
			d.log.Warn("campaign failed, will retry", "error", err)
		}
	case election.Release:
		if err != nil {
			d.log.Warn("a release attempt failed; after the third, followers take over when the lease expires", "error", err)
		} else {
			d.log.Info("released the lease")
		}
	}
}

// The outcomes of a renewal, for the metrics (string).
const (
	renewalOK       = "ok"
	renewalConflict = "conflict"
	renewalTimeout  = "timeout"
	renewalError    = "error"
)

// renewalOutcome is a renewal's result for the metrics.
func renewalOutcome(err error) string {
	switch {
	case err == nil:
		return renewalOK
	case store.InFlightRefusal(err): // refused uncompared until its time was up
		return renewalTimeout
	case store.Classify(err) == election.Conflict:
		return renewalConflict
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout):
		return renewalTimeout
	}
	return renewalError
}
