package cluster

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/election"
	"github.com/ozanturksever/go-cluster/internal/store"
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
	cfg   Config
	log   *slog.Logger
	store *store.Store
	hooks Hooks
	disp  *dispatcher
	view  *view
	m     *election.Machine
	// priority0 is the priority the machine started with; SetPriority
	// sends later ones (priority.go).
	priority0 int

	// announced is this node's member record, withdrawn at Stop (nil:
	// none was written). Set before the loop runs; read at teardown.
	announced *announcement

	cmds    chan command
	control chan controlRequest // step-down requests from NATS
	health  chan error          // ReadinessCheck results
	answers chan answer         // answers to the machine's requests
	conns   chan election.Conn  // the connection's state, latest only (watchConn)
	expired chan struct{}       // the deadline timer ended the tenure (buffered, 1)
	exited  chan struct{}       // closed when run returns

	base    context.Context
	hookCtx context.Context
	// stopHooks cancels hookCtx; tornDown says the Node's teardown has
	// begun (guarded by the Node's mu).
	stopHooks context.CancelFunc
	tornDown  bool

	watcher  *store.LeaseWatch
	watchID  uint64         // the election.Watch whose watch is awaited; 0 for none
	cleanup  sync.WaitGroup // watches being stopped in the background
	requests sync.WaitGroup // requests out, and cooldown records

	tenure  *driverTenure // the live tenure's ctx; nil when none
	losing  *loseSignals  // the OnLoseLeadership last queued, until it returns
	replies map[uint64]func(election.Reply)
	tokens  uint64
	conn    election.Conn // the connection as it was at Start
	timer   *time.Timer

	err      error // permanent failure
	finished bool

	beforeAction func(election.Action) // Node.beforeAction: tests only
}

type commandKind int

const (
	cmdStepDown commandKind = iota
	cmdStop
	cmdValidate
	cmdSetMetadata
	cmdSetPriority
)

// command is a call of the public API on its way to the driver.
type command struct {
	kind   commandKind
	reply  chan error
	epoch  chan int64 // cmdValidate: the proven epoch
	to     string     // cmdStepDown: preferred successor
	tenure int64      // cmdStepDown: the tenure to end (0: the current one)
	// metadata (cmdSetMetadata): what the node publishes from now on.
	metadata map[string]string
	// priority (cmdSetPriority): the node's priority from now on.
	priority int
	// async (cmdStepDown): reply once the step-down has begun, not when
	// the lease is released. A hook calling StepDown cannot wait for the
	// release: it waits for OnLoseLeadership, which runs after that hook.
	async bool
}

// newDriver makes the election of n, not yet running, after it opened st.
func newDriver(n *Node, st *store.Store, control chan controlRequest, base context.Context) *driver {
	hookCtx, hookStop := context.WithCancel(context.Background())
	reconnects := st.Conn().Stats().Reconnects
	p := electionParams(n.cfg, n.campaign, n.instance)
	p.Priority = n.Priority()
	m := election.New(p, uint64(time.Now().UnixNano()))
	return &driver{
		cfg:       n.cfg,
		log:       n.log,
		store:     st,
		hooks:     n.hooks,
		disp:      newDispatcher(n.log, n.cfg.Metrics),
		view:      n.view,
		m:         m,
		priority0: p.Priority,
		cmds:      make(chan command),
		control:   control,
		health:    make(chan error),
		answers:   make(chan answer, 1),
		conns:     make(chan election.Conn, 1),
		expired:   make(chan struct{}, 1),
		exited:    make(chan struct{}),
		base:      base,
		hookCtx:   hookCtx,
		stopHooks: hookStop,
		replies:   make(map[uint64]func(election.Reply)),
		conn:      election.Conn{Connected: true, Reconnects: reconnects},

		beforeAction: n.beforeAction,
	}
}

// electionParams is what the machine reads of cfg (defaults applied).
func electionParams(cfg Config, campaign bool, instance string) election.Params {
	return election.Params{NodeID: cfg.NodeID, Instance: instance, Observer: !campaign,
		LeaseTTL: cfg.LeaseTTL, RenewInterval: cfg.RenewInterval, SafetyMargin: cfg.SafetyMargin,
		RequestTimeout: cfg.RequestTimeout, DrainTimeout: cfg.DrainTimeout, Cooldown: cfg.Cooldown,
		Priority: cfg.Priority, PreemptDelay: cfg.PreemptDelay, Metadata: cfg.Metadata,
		ReadinessCheck: cfg.ReadinessCheck != nil, ReadinessThreshold: cfg.ReadinessThreshold}
}

// run is the driver's loop: one event at a time, until the machine is
// done or the Node's teardown cancels base.
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
			d.feed(watchEvent(ent, ok))
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
			d.feed(election.LoseStarted{Epoch: d.losing.epoch})
		case <-done:
			epoch := d.losing.epoch
			d.losing = nil
			d.feed(election.LoseDone{Epoch: epoch})
		case c := <-d.cmds:
			d.feed(d.commandEvent(c))
		case r := <-d.control:
			d.feed(d.controlEvent(r))
		case err := <-d.health:
			d.feed(election.Health{Err: err})
		}
	}
}

// updates is the watch's channel; nil (never ready) without a watch.
func (d *driver) updates() <-chan jetstream.KeyValueEntry {
	if d.watcher == nil {
		return nil
	}
	return d.watcher.Updates()
}

// watchEvent is what the watch delivered, as the machine's event: an
// entry, the end of the initial values (nil), or the channel closed.
func watchEvent(ent jetstream.KeyValueEntry, ok bool) election.Event {
	switch {
	case !ok:
		return election.WatchClosed{}
	case ent == nil:
		return election.Synced{}
	}
	return election.Entry{KV: toEntry(ent)}
}

// toEntry is a KV entry as the machine sees it.
func toEntry(ent jetstream.KeyValueEntry) election.KVEntry {
	op := election.Put
	switch ent.Operation() {
	case jetstream.KeyValueDelete:
		op = election.Delete
	case jetstream.KeyValuePurge:
		op = election.Purge
	}
	return election.KVEntry{Rev: ent.Revision(), Op: op, Value: ent.Value()}
}

// feed hands the machine one event at this process's now, and carries out
// what it returns.
func (d *driver) feed(ev election.Event) {
	d.carryOut(d.m.Handle(time.Now(), ev))
	d.publish()
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
		if d.beforeAction != nil {
			d.beforeAction(a) // a test stalls the loop here
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
	case election.Fail:
		d.log.Error("permanent error; the node stops campaigning", "error", a.Err)
		d.err = a.Err
	case election.Finished:
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
		wait = max(time.Until(at), 0)
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
