package vip

import (
	"io"
	"net"
	"sync/atomic"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Backoff between retries of a failed repair, announcement or
// subscription.
const (
	minRetry = 100 * time.Millisecond
	maxRetry = 5 * time.Second
)

// keeper is the goroutine that holds the address between Acquire and
// Release: it finishes announcement bursts, repairs the address when it is
// removed or its interface comes back, refreshes it, and retries what
// failed. Everything it does to the kernel happens under Manager.mu after
// checking that Release has not stopped it.
type keeper struct {
	m    *Manager
	stop chan struct{} // closed (under m.mu) by Release
	done chan struct{} // closed when the goroutine has exited
	kick chan struct{} // a burst was (re)started: arm the burst timer
	// again asks for a retry (a route Acquire could not add).
	again chan struct{}

	closeq  chan io.Closer // announcement sockets to close, off m.mu
	closing atomic.Int32   // sockets handed over and not yet closed

	// Guarded by m.mu.
	burstLeft int  // announcement rounds still to send in this burst
	announced bool // a round succeeded since the address was last (re)added

	// Owned by the goroutine.
	burst, retry, resub *time.Timer
	backoff             time.Duration
	linkIndex           int  // last seen index of the interface (0: unknown)
	linkUp              bool // last seen up-and-running state
}

// startKeeper subscribes to netlink events and starts the goroutine. It is
// called with m.mu held. A failed subscription is logged and retried by the
// goroutine; meanwhile only refresh and retries notice a removal.
func (m *Manager) startKeeper() *keeper {
	k := &keeper{
		m:       m,
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
		kick:    make(chan struct{}, 1),
		again:   make(chan struct{}, 1),
		closeq:  make(chan io.Closer, 16),
		burst:   stoppedTimer(),
		retry:   stoppedTimer(),
		resub:   stoppedTimer(),
		backoff: minRetry,
	}
	ev, err := subscribe(m.run, k.subscriptionError)
	if err != nil {
		m.log.Warn("cannot watch address changes; retrying", "err", err)
		k.resub.Reset(minRetry)
	}
	go k.loop(ev)
	return k
}

func stoppedTimer() *time.Timer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}

// stopLocked tells the goroutine to exit; m.mu is held.
func (k *keeper) stopLocked() { close(k.stop) }

// stoppedLocked reports whether Release has stopped this keeper; m.mu is held.
func (k *keeper) stoppedLocked() bool {
	select {
	case <-k.stop:
		return true
	default:
		return false
	}
}

// startBurstLocked records that round one of a burst was just sent (ok
// tells whether it succeeded) and schedules the others; m.mu is held.
func (k *keeper) startBurstLocked(ok bool) {
	k.burstLeft = k.m.s.AnnounceCount - 1
	k.announced = ok
	select {
	case k.kick <- struct{}{}:
	default:
	}
}

// retrySoon has the goroutine run ensure after the retry backoff.
func (k *keeper) retrySoon() {
	select {
	case k.again <- struct{}{}:
	default:
	}
}

// closeLater has the goroutine close c (nil is ignored), or closes it now
// if too many are pending.
func (k *keeper) closeLater(c io.Closer) {
	if c == nil {
		return
	}
	k.closing.Add(1)
	select {
	case k.closeq <- c:
	default:
		k.close(c)
	}
}

func (k *keeper) close(c io.Closer) {
	c.Close()
	k.closing.Add(-1)
}

// closePending closes the sockets still queued; the goroutine is exiting.
func (k *keeper) closePending() {
	for {
		select {
		case c := <-k.closeq:
			k.close(c)
		default:
			return
		}
	}
}

func (k *keeper) subscriptionError(err error) {
	k.m.log.Warn("netlink subscription error", "err", err)
}

func (k *keeper) loop(ev *events) {
	defer close(k.done)
	defer k.closePending()
	defer func() { ev.close() }()
	defer k.burst.Stop()
	defer k.retry.Stop()
	defer k.resub.Stop()

	var refresh <-chan time.Time
	if d := k.m.s.RefreshInterval; d > 0 {
		t := time.NewTicker(d)
		defer t.Stop()
		refresh = t.C
	}
	for {
		var addrs <-chan netlink.AddrUpdate
		var links <-chan netlink.LinkUpdate
		if ev != nil {
			addrs, links = ev.addrs, ev.links
		}
		select {
		case <-k.stop:
			return
		case <-k.kick:
			k.burst.Reset(k.m.s.AnnounceInterval)
		case <-k.again:
			k.retry.Reset(k.nextBackoff())
		case c := <-k.closeq:
			k.close(c)
		case <-k.burst.C:
			k.burstRound()
		case u, ok := <-addrs:
			if !ok {
				ev = k.lostSubscription(ev)
				continue
			}
			if !u.NewAddr && k.m.s.matches(&u.LinkAddress) {
				k.ensure("address removed", false)
			}
		case u, ok := <-links:
			if !ok {
				ev = k.lostSubscription(ev)
				continue
			}
			k.linkChanged(u)
		case <-refresh:
			k.ensure("refresh", true)
		case <-k.retry.C:
			k.ensure("retry", false)
		case <-k.resub.C:
			var err error
			if ev, err = subscribe(k.m.run, k.subscriptionError); err != nil {
				k.m.log.Warn("cannot watch address changes; retrying", "err", err)
				k.resub.Reset(k.nextBackoff())
				continue
			}
			k.ensure("resubscribed", false) // changes may have been missed
		}
	}
}

// lostSubscription handles a subscription whose socket failed (an
// overflowing receive buffer, say): drop it and subscribe again soon.
func (k *keeper) lostSubscription(ev *events) *events {
	k.m.log.Warn("netlink subscription ended; resubscribing")
	ev.close()
	k.resub.Reset(minRetry)
	return nil
}

// linkChanged repairs and re-announces when the interface comes up or is
// re-created under the same name.
func (k *keeper) linkChanged(u netlink.LinkUpdate) {
	a := u.Attrs()
	if a == nil || a.Name != k.m.s.Interface || u.Header.Type != unix.RTM_NEWLINK {
		return
	}
	up := a.Flags&net.FlagUp != 0 && a.RawFlags&unix.IFF_RUNNING != 0
	changed := up && (a.Index != k.linkIndex || !k.linkUp)
	k.linkIndex, k.linkUp = a.Index, up
	if changed {
		k.ensure("interface up", true)
	}
}

// ensure puts the address back if it is missing and announces it if it
// was missing, if announce is set, or if no announcement has succeeded yet.
// Failures are retried with backoff.
func (k *keeper) ensure(reason string, announce bool) {
	m := k.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if k.stoppedLocked() {
		return
	}
	var added bool
	err := m.run(func() (err error) {
		added, err = m.s.addAddress()
		return err
	})
	if err != nil {
		m.log.Warn("cannot restore VIP; retrying", "reason", reason, "err", err)
		k.retry.Reset(k.nextBackoff())
		return
	}
	if added {
		m.stats.added()
		m.log.Warn("VIP was missing; restored", "reason", reason)
	}
	// Removing an IPv4 address takes the routes from it along.
	routesAdded, routeErr := m.addRoutesLocked()
	if routesAdded > 0 && !added {
		m.log.Warn("VIP routes were missing; restored", "reason", reason, "routes", routesAdded)
	}
	if !added && !announce && k.announced && routeErr == nil {
		k.retry.Stop()
		k.backoff = minRetry
		return
	}
	err = m.announceLocked()
	if added {
		k.startBurstLocked(err == nil)
	} else if err == nil {
		k.announced = true
	}
	if err != nil || routeErr != nil {
		m.log.Warn("VIP announcement or routes failed; retrying", "reason", reason, "err", err, "route_err", routeErr)
		k.retry.Reset(k.nextBackoff())
		return
	}
	m.log.Debug("VIP announced", "reason", reason)
	k.retry.Stop()
	k.backoff = minRetry
}

// burstRound sends the next round of a burst.
func (k *keeper) burstRound() {
	m := k.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if k.stoppedLocked() || k.burstLeft <= 0 {
		return
	}
	k.burstLeft--
	if err := m.announceLocked(); err != nil {
		m.log.Warn("VIP announcement failed", "err", err)
	} else {
		k.announced = true
	}
	switch {
	case k.burstLeft > 0:
		k.burst.Reset(m.s.AnnounceInterval)
	case !k.announced:
		k.retry.Reset(k.nextBackoff())
	}
}

// nextBackoff returns the current retry delay and doubles it, up to maxRetry.
func (k *keeper) nextBackoff() time.Duration {
	d := k.backoff
	k.backoff = min(2*k.backoff, maxRetry)
	return d
}
