package vip

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
)

// Defaults of the Hooks options.
const (
	// DefaultRetryMin is the first delay before acquiring again after a
	// failure (WithRetry).
	DefaultRetryMin = 250 * time.Millisecond
	// DefaultRetryMax caps the delay between acquisition attempts.
	DefaultRetryMax = 5 * time.Second
	// DefaultReleaseTimeout bounds the release at the end of a tenure
	// (WithReleaseTimeout).
	DefaultReleaseTimeout = 5 * time.Second
)

// Hooks makes a Manager follow a cluster.Node: the node's leader holds the
// virtual IP. It implements cluster.Hooks; combine it with the
// application's hooks:
//
//	node, err := cluster.NewNode(cfg, cluster.ComposeHooks(app, vip.NewHooks(m)))
//
// With that order the application becomes ready before the address
// arrives, and the address is gone before the application stops.
//
// Becoming leader: OnBecomeLeader calls Manager.Acquire once and returns
// its error, so the Node logs and counts a failure. A failed acquisition
// is then retried in the background, with capped exponential backoff
// (WithRetry), for as long as the tenure lasts; optionally the node steps
// down if the address still is not held after a while (WithStepDown), so
// that a node that can hold it takes over. An address that was added but
// could not be announced counts as acquired: the Manager keeps
// re-announcing it.
//
// Losing leadership: the address is released the moment the tenure's
// context is cancelled, which the Node does before it calls
// OnLoseLeadership and, when the lease runs out, before any other node can
// take the lease over. OnLoseLeadership waits for that release and returns
// its error. On StepDown and Stop the Node releases the lease only after
// OnLoseLeadership returns, so the address is gone before a successor
// adds it.
//
// Stale addresses: when OnLeaderChange reports a leader while this node is
// not leading, the address is removed from this host if it is there (left
// by a crash, say, or a previous run of this process).
type Hooks struct {
	m              *Manager
	log            *slog.Logger
	retryMin       time.Duration
	retryMax       time.Duration
	releaseTimeout time.Duration
	stepDownAfter  time.Duration
	stepDown       func(context.Context) error

	holdOffMin, holdOffMax time.Duration // WithFailureHoldOff; 0: off

	mu     sync.Mutex
	tenure *tenure // the current tenure, nil when not leading
	// The tenures that ended without the address held, in a row, the
	// last one's error and when it ended (WithFailureHoldOff).
	failures int
	failedAt time.Time
	failure  error
}

var _ cluster.Hooks = (*Hooks)(nil)

// HooksOption configures NewHooks.
type HooksOption func(*Hooks)

// WithRetry sets the backoff between attempts to acquire the address after
// a failure: first delay min, doubling up to max. Defaults DefaultRetryMin
// and DefaultRetryMax.
func WithRetry(min, max time.Duration) HooksOption {
	return func(h *Hooks) { h.retryMin, h.retryMax = min, max }
}

// WithReleaseTimeout bounds the release at the end of a tenure. Default
// DefaultReleaseTimeout.
func WithReleaseTimeout(d time.Duration) HooksOption {
	return func(h *Hooks) { h.releaseTimeout = d }
}

// WithStepDown makes the node give up leadership when the address is still
// not acquired after d of a tenure: stepDown is called once, on its own
// goroutine, typically with node.StepDown. Use it when another node may be
// able to hold the address when this one cannot (a missing interface, a
// missing capability). Off by default: if every node fails the same way,
// leadership would move around the cluster to no avail.
func WithStepDown(d time.Duration, stepDown func(context.Context) error) HooksOption {
	return func(h *Hooks) { h.stepDownAfter, h.stepDown = d, stepDown }
}

// WithFailureHoldOff makes Err keep reporting, after a tenure that ended
// without the address held, that tenure's error for a hold-off: min after
// the first such tenure, doubling with each one in a row up to max, and
// forgotten once a tenure holds the address. A node whose readiness reads
// Err then stays out of elections meanwhile, instead of taking leadership
// back (as the preferred leader, say) only to fail again. Off by default.
func WithFailureHoldOff(min, max time.Duration) HooksOption {
	return func(h *Hooks) { h.holdOffMin, h.holdOffMax = min, max }
}

// NewHooks returns Hooks that make m (not nil) follow a Node's leadership.
func NewHooks(m *Manager, opts ...HooksOption) *Hooks {
	h := &Hooks{
		m:              m,
		log:            m.logger(),
		retryMin:       DefaultRetryMin,
		retryMax:       DefaultRetryMax,
		releaseTimeout: DefaultReleaseTimeout,
	}
	for _, o := range opts {
		o(h)
	}
	if h.retryMin <= 0 {
		h.retryMin = DefaultRetryMin
	}
	if h.retryMax < h.retryMin {
		h.retryMax = h.retryMin
	}
	if h.releaseTimeout <= 0 {
		h.releaseTimeout = DefaultReleaseTimeout
	}
	h.holdOffMax = max(h.holdOffMax, h.holdOffMin)
	return h
}

// OnBecomeLeader acquires the address. On failure it returns the error and
// keeps retrying in the background while ctx, the tenure, lasts.
func (h *Hooks) OnBecomeLeader(ctx context.Context) error {
	h.mu.Lock()
	prev := h.tenure
	t := newTenure(ctx)
	h.tenure = t
	h.mu.Unlock()
	if prev != nil { // Become twice without Lose: end the previous one first
		prev.end()
	}

	err := h.m.Acquire(t.ctx)
	t.setErr(h.m, err)
	if t.err() == nil && t.ctx.Err() == nil {
		h.held()
	}
	go h.hold(t, err)
	if err != nil {
		return fmt.Errorf("vip: acquiring on becoming leader (retrying while leader): %w", err)
	}
	return nil
}

// OnLoseLeadership waits until the address is released and returns the
// release error. Without a tenure it releases the address itself.
func (h *Hooks) OnLoseLeadership(ctx context.Context) error {
	h.mu.Lock()
	t := h.tenure
	h.tenure = nil
	h.mu.Unlock()
	if t == nil {
		return h.release()
	}
	t.cancel()
	select {
	case <-t.done:
		return t.releaseErr
	case <-ctx.Done():
		return fmt.Errorf("vip: waiting for release: %w", ctx.Err())
	}
}

// Err says why the address is not held although the node leads: the
// last acquisition error of the current tenure, while the Manager does
// not hold the address. It is nil when the address is held (even if its
// announcement or a route failed: those are retried with the address
// up), and when the node does not lead, except during the hold-off of
// WithFailureHoldOff. A node whose Err is not nil cannot serve the VIP:
// make its readiness check fail, so that it steps down and another node
// takes over.
func (h *Hooks) Err() error {
	h.mu.Lock()
	t := h.tenure
	failures, failedAt, failure := h.failures, h.failedAt, h.failure
	h.mu.Unlock()
	if t != nil {
		return t.err()
	}
	if failures == 0 || h.holdOffMin <= 0 {
		return nil
	}
	holdOff := h.holdOffMin
	for i := 1; i < failures && holdOff < h.holdOffMax; i++ {
		holdOff *= 2
	}
	holdOff = min(holdOff, h.holdOffMax)
	if left := holdOff - time.Since(failedAt); left > 0 {
		return fmt.Errorf("%w (in the last tenure; out of elections for %v more)", failure, left.Round(time.Second))
	}
	return nil
}

// Failed returns the error of the last tenure that ended without the
// address held, until the address is held again (in a later tenure); nil
// before any tenure has ended so, and once the address has been held
// since. Unlike Err it knows no hold-off and says nothing of the running
// tenure's attempts: it says whether this node has shown, since it last
// failed, that it can hold the address. A node that cannot should not
// take leadership from a leader that holds it (the agent runs such a node
// with priority 0), yet may lead when nobody else can.
func (h *Hooks) Failed() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failures == 0 {
		return nil
	}
	return h.failure
}

// held records that the address is held: the failures are forgotten.
func (h *Hooks) held() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failures, h.failure = 0, nil
}

// ended records how tenure t ended: with the address held or not.
func (h *Hooks) ended(t *tenure, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err == nil {
		h.failures = 0
		return
	}
	h.failures++
	h.failedAt, h.failure = time.Now(), err
}

// OnLeaderChange removes a stale address when another node leads.
func (h *Hooks) OnLeaderChange(ctx context.Context, nodeID string) error {
	h.mu.Lock()
	leading := h.tenure != nil
	h.mu.Unlock()
	if leading || nodeID == "" {
		return nil
	}
	held, err := h.m.IsAcquired(ctx)
	if err != nil || !held {
		return nil // no interface or no address: nothing stale here
	}
	h.log.Warn("removing stale VIP: another node leads", "leader", nodeID)
	return h.release()
}

func (h *Hooks) release() error {
	ctx, cancel := context.WithTimeout(context.Background(), h.releaseTimeout)
	defer cancel()
	return h.m.Release(ctx)
}

// hold runs for one tenure: it retries a failed acquisition, then releases
// the address as soon as the tenure ends.
func (h *Hooks) hold(t *tenure, err error) {
	defer close(t.done)
	start := time.Now()
	delay := h.retryMin
	steppedDown := false
	// ErrAnnounce: the address is on the interface and the Manager keeps
	// announcing it; that is held.
	for err != nil && !errors.Is(err, ErrAnnounce) && t.ctx.Err() == nil {
		if h.stepDown != nil && !steppedDown && time.Since(start) >= h.stepDownAfter {
			steppedDown = true
			h.log.Error("VIP still not acquired; stepping down", "after", h.stepDownAfter, "err", err)
			// Not waited for: StepDown waits for OnLoseLeadership, which
			// waits for this goroutine.
			go h.callStepDown()
		}
		timer := time.NewTimer(delay)
		select {
		case <-t.ctx.Done():
			timer.Stop()
			continue
		case <-timer.C:
		}
		delay = min(2*delay, h.retryMax)
		err = h.m.Acquire(t.ctx)
		t.setErr(h.m, err)
		if t.err() == nil && t.ctx.Err() == nil { // held, a route or an announcement aside
			h.held()
		}
		if err != nil {
			h.log.Warn("VIP acquisition failed; retrying", "in", delay, "err", err)
		} else {
			h.log.Info("VIP acquired after retrying", "after", time.Since(start).Round(time.Millisecond))
		}
	}
	<-t.ctx.Done()
	h.ended(t, t.lastErr())
	t.releaseErr = h.release()
}

func (h *Hooks) callStepDown() {
	ctx, cancel := context.WithTimeout(context.Background(), h.releaseTimeout+time.Minute)
	defer cancel()
	if err := h.stepDown(ctx); err != nil {
		h.log.Error("step down failed", "err", err)
	}
}

// tenure is one period of leadership as seen by Hooks.
type tenure struct {
	ctx        context.Context
	cancel     context.CancelFunc
	done       chan struct{} // closed when hold has released the address
	releaseErr error         // set before done is closed

	mu         sync.Mutex
	acquireErr error // why the address is not held, nil when it is
	last       error // the last acquisition error, even once the tenure ends
}

// setErr records the outcome of an acquisition: err counts only while m
// does not hold the address (a failed route or announcement does not).
func (t *tenure) setErr(m *Manager, err error) {
	if err != nil && m.held() {
		err = nil
	}
	if err != nil {
		err = fmt.Errorf("vip %s: not held although leading: %w", m.Config().CIDR(), err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err == nil || !errors.Is(err, context.Canceled) { // an acquisition cut short by the tenure's end says nothing
		t.last = err
	}
	if t.ctx.Err() != nil {
		err = nil
	}
	t.acquireErr = err
}

// lastErr is the tenure's last acquisition error (nil: held at the end).
func (t *tenure) lastErr() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.last
}

func (t *tenure) err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.acquireErr
}

func newTenure(parent context.Context) *tenure {
	ctx, cancel := context.WithCancel(parent)
	return &tenure{ctx: ctx, cancel: cancel, done: make(chan struct{})}
}

// end cancels the tenure and waits for its release.
func (t *tenure) end() {
	t.cancel()
	<-t.done
}
