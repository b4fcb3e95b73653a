package vip

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Monitor watches, for a Manager, whether its VIP can be held on this
// host, and keeps copies of the VIP off the host while the Manager does
// not hold it. It works from netlink link and address events, not by
// polling:
//
//   - Err says whether the interface exists, is up and has a carrier
//     (keepalived's track_interface, always on): a node that cannot hold
//     its VIP should neither lead nor campaign.
//   - While the Manager does not hold the address, any address with the
//     VIP's IP on the interface, whatever its prefix, is removed: the ones
//     there when the Monitor starts and the ones added later (see
//     Manager.RemoveStray).
//
// Start one with NewMonitor; Close stops it.
type Monitor struct {
	m        *Manager
	onChange func(error)
	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once

	mu  sync.Mutex
	err error // the interface's state: nil when up
	// index is the interface's last seen index, 0 when unknown.
	index int
}

// NewMonitor starts watching m's interface. onChange, if not nil, is
// called on the Monitor's goroutine each time Err changes, with the new
// value; it must not block for long. The first state is known before
// NewMonitor returns.
func NewMonitor(m *Manager, onChange func(error)) *Monitor {
	mo := &Monitor{m: m, onChange: onChange, stop: make(chan struct{}), done: make(chan struct{})}
	ev, err := subscribe(m.run, mo.subscriptionError)
	if err != nil {
		m.log.Warn("cannot watch the VIP's interface; retrying", "err", err)
	}
	mo.refresh()
	go mo.loop(ev)
	return mo
}

// Err returns nil when the interface exists, is up and has a carrier,
// and otherwise an *InterfaceError saying which it is not (wrapping
// ErrInterfaceNotFound or ErrInterfaceDown). Another failure to look the
// interface up is returned as it is.
func (mo *Monitor) Err() error {
	mo.mu.Lock()
	defer mo.mu.Unlock()
	return mo.err
}

// Close stops the Monitor and waits for its goroutine. It may be called
// more than once.
func (mo *Monitor) Close() {
	mo.stopOnce.Do(func() { close(mo.stop) })
	<-mo.done
}

func (mo *Monitor) subscriptionError(err error) {
	mo.m.log.Warn("netlink subscription error", "err", err)
}

func (mo *Monitor) loop(ev *events) {
	defer close(mo.done)
	defer func() { ev.close() }()
	resub := stoppedTimer()
	defer resub.Stop()
	backoff := minRetry
	if ev == nil {
		resub.Reset(backoff)
	}
	for {
		var addrs <-chan netlink.AddrUpdate
		var links <-chan netlink.LinkUpdate
		if ev != nil {
			addrs, links = ev.addrs, ev.links
		}
		select {
		case <-mo.stop:
			return
		case u, ok := <-links:
			if !ok {
				ev = mo.lost(ev, resub)
				continue
			}
			mo.linkChanged(u)
		case u, ok := <-addrs:
			if !ok {
				ev = mo.lost(ev, resub)
				continue
			}
			// Added: a stray copy, unless ours. Removed: ours may have
			// been released, leaving copies with other prefixes.
			if mo.isVIP(u) {
				mo.removeStray()
			}
		case <-resub.C:
			var err error
			if ev, err = subscribe(mo.m.run, mo.subscriptionError); err != nil {
				backoff = min(2*backoff, maxRetry)
				resub.Reset(backoff)
			}
			mo.refresh() // changes may have been missed
		}
	}
}

// lost drops a failed subscription and schedules a new one.
func (mo *Monitor) lost(ev *events, resub *time.Timer) *events {
	mo.m.log.Warn("netlink subscription ended; resubscribing")
	ev.close()
	resub.Reset(minRetry)
	return nil
}

// isVIP reports whether u is an address with the VIP's IP on the
// interface (or on an interface not known yet).
func (mo *Monitor) isVIP(u netlink.AddrUpdate) bool {
	ip := u.LinkAddress.IP
	if mo.m.s.addr.Is4() {
		ip = ip.To4()
	}
	if ip == nil || !ip.Equal(net.IP(mo.m.s.addr.AsSlice())) {
		return false
	}
	mo.mu.Lock()
	defer mo.mu.Unlock()
	return mo.index == 0 || u.LinkIndex == mo.index
}

// refresh looks the interface up, then removes stray copies of the VIP.
func (mo *Monitor) refresh() {
	var link netlink.Link
	err := mo.m.run(func() (err error) {
		link, err = mo.m.s.lookupLink()
		return err
	})
	switch {
	case errors.Is(err, ErrInterfaceNotFound):
		mo.set(0, stateMissing, nil)
	case err != nil:
		mo.set(0, "", err)
	default:
		mo.set(link.Attrs().Index, linkState(link.Attrs()), nil)
	}
	mo.removeStray()
}

// linkChanged follows the interface through link events: created, up,
// down, carrier lost or back, renamed, deleted.
func (mo *Monitor) linkChanged(u netlink.LinkUpdate) {
	a := u.Attrs()
	if a == nil {
		return
	}
	name := mo.m.s.Interface
	mo.mu.Lock()
	index := mo.index
	mo.mu.Unlock()
	switch {
	case a.Name == name && u.Header.Type == unix.RTM_DELLINK:
		mo.set(0, stateMissing, nil)
	case a.Name == name && u.Header.Type == unix.RTM_NEWLINK:
		mo.set(a.Index, linkState(a), nil)
	case a.Index == index && index != 0: // renamed away, or deleted under another name
		mo.set(0, stateMissing, nil)
	}
}

// linkState is "" for an interface that is up with a carrier, else what
// it lacks.
func linkState(a *netlink.LinkAttrs) string {
	switch {
	case a.RawFlags&unix.IFF_UP == 0:
		return stateDown
	case a.RawFlags&unix.IFF_RUNNING == 0:
		return stateNoCarrier
	}
	return ""
}

// set records the interface's index and state (other: a lookup failure)
// and reports a change, outside the lock.
func (mo *Monitor) set(index int, state string, other error) {
	var err error
	switch {
	case other != nil:
		err = other
	case state != "":
		err = &InterfaceError{VIP: mo.m.s.prefix, Interface: mo.m.s.Interface, State: state}
	}
	mo.mu.Lock()
	prev := mo.err
	mo.err, mo.index = err, index
	mo.mu.Unlock()
	if errText(prev) == errText(err) {
		return
	}
	if err != nil {
		mo.m.log.Warn("the VIP cannot be held on this host", "reason", err.Error())
	} else {
		mo.m.log.Info("the VIP's interface is up again")
	}
	if mo.onChange != nil {
		mo.onChange(err)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// removeStray removes copies of the VIP the Manager does not hold.
func (mo *Monitor) removeStray() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := mo.m.RemoveStray(ctx); err != nil {
		mo.m.log.Warn("cannot remove a stray copy of the VIP", "err", err)
	}
}
