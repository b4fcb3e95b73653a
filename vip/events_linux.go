package vip

import (
	"sync/atomic"

	"github.com/vishvananda/netlink"
)

// events is a netlink subscription to address and link changes in the
// manager's namespace.
type events struct {
	addrs   chan netlink.AddrUpdate
	links   chan netlink.LinkUpdate
	done    chan struct{}
	closing atomic.Bool
	addrOK  bool // the address subscription started (and will close addrs)
	linkOK  bool // the link subscription started (and will close links)
}

// subscribe opens the subscriptions through run, so that their sockets
// live in the manager's namespace. onErr receives receive errors, except
// those caused by close.
func subscribe(run runner, onErr func(error)) (*events, error) {
	ev := &events{
		addrs: make(chan netlink.AddrUpdate, 16),
		links: make(chan netlink.LinkUpdate, 16),
		done:  make(chan struct{}),
	}
	report := func(err error) {
		if !ev.closing.Load() {
			onErr(err)
		}
	}
	err := run(func() error {
		if err := netlink.AddrSubscribeWithOptions(ev.addrs, ev.done, netlink.AddrSubscribeOptions{ErrorCallback: report}); err != nil {
			return err
		}
		ev.addrOK = true
		if err := netlink.LinkSubscribeWithOptions(ev.links, ev.done, netlink.LinkSubscribeOptions{ErrorCallback: report}); err != nil {
			return err
		}
		ev.linkOK = true
		return nil
	})
	if err != nil {
		ev.close()
		return nil, err
	}
	return ev, nil
}

// close ends the subscriptions and waits until netlink's goroutines are
// gone: they stop on done, but only after handing over the update they
// hold, so the channels are drained until netlink closes them.
func (ev *events) close() {
	if ev == nil {
		return
	}
	ev.closing.Store(true)
	close(ev.done)
	if ev.addrOK {
		for range ev.addrs {
		}
	}
	if ev.linkOK {
		for range ev.links {
		}
	}
}
