package vip

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"sync"
)

// Manager adds a virtual IP address to a network interface, announces it
// to the neighbours, keeps it there while held, and removes it.
//
// All methods are safe for concurrent use. Acquire and Release are
// idempotent.
type Manager struct {
	s   settings
	log *slog.Logger
	run runner // enters Config.NetNS for every kernel operation

	// mu serialises Acquire, Release and the keeper's repairs and
	// announcements, so that nothing is added or announced after Release.
	mu     sync.Mutex
	keeper *keeper // non-nil while the address is held

	stats stats
}

// Stats returns what the Manager has done: whether it holds the address,
// the announcement rounds sent, when it last added and removed the
// address.
func (m *Manager) Stats() Stats { return m.stats.snapshot() }

// NewManager validates cfg, applies defaults and returns a Manager. It
// does not touch the network: the interface need not exist yet.
func NewManager(cfg Config) (*Manager, error) {
	s, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	return &Manager{
		s:   s,
		log: s.Logger.With("vip", s.prefix.String(), "interface", s.Interface),
		run: newRunner(s.NetNS),
	}, nil
}

// Config returns the configuration in use, defaults applied.
func (m *Manager) Config() Config { return m.s.Config }

func (m *Manager) logger() *slog.Logger { return m.log }

// announceLocked sends one announcement round; m.mu is held and m.keeper
// is set. The socket used is handed to the keeper to close: closing it can
// take longer than sending (see settings.announce).
func (m *Manager) announceLocked() error {
	var c io.Closer
	err := m.run(func() (err error) {
		c, err = m.s.announce()
		return err
	})
	m.keeper.closeLater(c)
	if err == nil {
		m.stats.announcements.Add(1)
	}
	return err
}

// Acquire adds the address to the interface, then its routes
// (Config.Routes), and announces it: one
// announcement round before it returns, the rest of the burst
// (Config.AnnounceCount rounds, Config.AnnounceInterval apart) in the
// background.
//
// From a successful add until Release the Manager holds the address: a
// background goroutine puts it back and re-announces it when it is
// removed (netlink address events) or when the interface comes back up or
// is re-created, and refreshes the announcement every
// Config.RefreshInterval if that is set. The goroutine is not bound to
// ctx, which only bounds this call; Release stops it.
//
// Acquiring an address that is already held or already on the interface
// succeeds and announces it again.
//
// Errors wrap ErrInterfaceNotFound, ErrNeedNetAdmin (the address could not
// be added: nothing is held), ErrRoute or ErrNeedNetAdmin (the address is
// held, a route could not be added; routes are retried in the background
// and put back with the address), or ErrAnnounce, possibly with ErrNeedNetRaw
// (the address is on the interface and held, but the announcement failed;
// it is retried in the background).
func (m *Manager) Acquire(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()

	var added bool
	err := m.run(func() (err error) {
		added, err = m.s.addAddress()
		return err
	})
	if err != nil {
		return fmt.Errorf("acquire %s on %s: %w", m.s.prefix, m.s.Interface, err)
	}
	if added {
		m.stats.added()
	}
	m.stats.held.Store(true)
	if m.keeper == nil {
		m.keeper = m.startKeeper()
	}
	routesAdded, routeErr := m.addRoutesLocked()
	err = m.announceLocked()
	m.keeper.startBurstLocked(err == nil)
	if routeErr != nil {
		m.keeper.retrySoon()
		m.log.Warn("VIP added but a route was not; retrying in the background", "added", added, "err", routeErr, "announce_err", err)
		return fmt.Errorf("acquire %s on %s: address added, routes not: %w", m.s.prefix, m.s.Interface, routeErr)
	}
	if err != nil {
		m.log.Warn("VIP added but not announced; retrying in the background", "added", added, "err", err)
		return fmt.Errorf("acquire %s on %s: address added, not announced: %w", m.s.prefix, m.s.Interface, err)
	}
	m.log.Info("VIP acquired", "added", added, "routes_added", routesAdded)
	return nil
}

// addRoutesLocked adds the missing routes; m.mu is held.
func (m *Manager) addRoutesLocked() (added int, err error) {
	err = m.run(func() (err error) {
		added, err = m.s.addRoutes()
		return err
	})
	return added, err
}

// Release stops holding the address and removes its routes (Config.Routes),
// then the address, from the interface.
// Releasing an address that is not there, or whose interface no longer
// exists, succeeds. Once Release returns, the Manager sends no more
// announcements and its background goroutine has exited.
//
// Release does its work even when ctx is already done: removing the
// address takes a couple of netlink requests, and leaving a virtual IP
// behind on a node that is no longer the leader is worse than a late
// return. Errors wrap ErrNeedNetAdmin or a netlink error.
func (m *Manager) Release(ctx context.Context) error {
	_ = ctx // see above: never skipped
	m.mu.Lock()
	k := m.keeper
	m.keeper = nil
	if k != nil {
		k.stopLocked()
	}
	var removed bool
	err := m.run(func() error {
		routeErr := m.s.deleteRoutes() // before the address: never a route from an address gone
		var addrErr error
		removed, addrErr = m.s.deleteAddress()
		return errors.Join(routeErr, addrErr)
	})
	m.stats.held.Store(false)
	if removed {
		m.stats.removed()
	}
	m.mu.Unlock()
	if k != nil {
		<-k.done
	}
	if err != nil {
		return fmt.Errorf("release %s from %s: %w", m.s.prefix, m.s.Interface, err)
	}
	if k != nil || removed {
		m.log.Info("VIP released", "removed", removed)
	}
	return nil
}

// IsAcquired reports whether the interface carries exactly the address
// with exactly the configured prefix length (10.0.0.1/24 is neither
// 110.0.0.1/24 nor 10.0.0.1/16). It asks the kernel, so it also sees an
// address added by someone else. A missing interface is an error wrapping
// ErrInterfaceNotFound.
func (m *Manager) IsAcquired(ctx context.Context) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	var has bool
	err := m.run(func() (err error) {
		has, err = m.s.hasAddress()
		return err
	})
	if err != nil {
		return false, fmt.Errorf("check %s on %s: %w", m.s.prefix, m.s.Interface, err)
	}
	return has, nil
}

// RemoveStray removes from the interface every address with the VIP's IP,
// whatever its prefix length (a 192.0.2.10/32 left by keepalived, a /24
// copy added by hand), unless the Manager holds the address: a host that
// does not hold the VIP must not answer for it. Each removal is logged.
// It returns what it removed; a missing interface is not an error.
// Errors wrap ErrNeedNetAdmin or a netlink error.
func (m *Manager) RemoveStray(ctx context.Context) ([]netip.Prefix, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.keeper != nil {
		return nil, nil // held: the address is ours
	}
	var removed []netip.Prefix
	err := m.run(func() (err error) {
		removed, err = m.s.deleteStray()
		return err
	})
	for _, p := range removed {
		m.log.Warn("removed a stray copy of the VIP: this host does not hold it", "address", p.String())
	}
	if err != nil {
		return removed, fmt.Errorf("remove stray copies of %s from %s: %w", m.s.addr, m.s.Interface, err)
	}
	return removed, nil
}

// held reports whether the Manager holds the address (between a
// successful Acquire and Release).
func (m *Manager) held() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.keeper != nil
}
