package vip

import (
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// These functions talk netlink in the namespace of the calling thread;
// the Manager calls them through its runner.

// lookupLink finds the configured interface by name.
func (s *settings) lookupLink() (netlink.Link, error) {
	link, err := netlink.LinkByName(s.Interface)
	if err != nil {
		var notFound netlink.LinkNotFoundError
		if errors.As(err, &notFound) || errors.Is(err, unix.ENODEV) {
			return nil, fmt.Errorf("%w: %q", ErrInterfaceNotFound, s.Interface)
		}
		return nil, fmt.Errorf("vip: look up interface %q: %w", s.Interface, err)
	}
	return link, nil
}

// nlAddr is the address as netlink wants it. IPv6 addresses skip
// duplicate address detection: during a failover the previous holder may
// still answer for a moment, and DAD would leave the address tentative
// (unusable) or failed instead of taking it over.
func (s *settings) nlAddr() *netlink.Addr {
	a := &netlink.Addr{IPNet: &net.IPNet{
		IP:   net.IP(s.addr.AsSlice()),
		Mask: net.CIDRMask(s.Netmask, s.addr.BitLen()),
	}}
	if s.addr.Is6() {
		a.Flags = unix.IFA_F_NODAD
	}
	return a
}

// addAddress adds the address to the interface. added is false when it was
// already there (not an error).
func (s *settings) addAddress() (added bool, err error) {
	link, err := s.lookupLink()
	if err != nil {
		return false, err
	}
	a := s.nlAddr()
	// Only on add: the kernel deletes an address only if a label given
	// matches, and one added by someone else may carry another.
	a.Label = s.Label
	err = netlink.AddrAdd(link, a)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, unix.EEXIST):
		return false, nil
	case errors.Is(err, unix.ENODEV):
		return false, fmt.Errorf("%w: %q disappeared", ErrInterfaceNotFound, s.Interface)
	}
	return false, s.netAdminError(fmt.Sprintf("add %s to %s", s.prefix, s.Interface), err)
}

// deleteAddress removes the address from the interface. An address or an
// interface that is already gone is not an error.
func (s *settings) deleteAddress() (removed bool, err error) {
	link, err := s.lookupLink()
	if errors.Is(err, ErrInterfaceNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	err = netlink.AddrDel(link, s.nlAddr())
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, unix.EADDRNOTAVAIL), errors.Is(err, unix.ENODEV):
		return false, nil
	}
	return false, s.netAdminError(fmt.Sprintf("remove %s from %s", s.prefix, s.Interface), err)
}

// hasAddress reports whether the interface carries exactly this address
// with exactly this prefix length.
func (s *settings) hasAddress() (bool, error) {
	link, err := s.lookupLink()
	if err != nil {
		return false, err
	}
	addrs, err := s.listAddrs(link)
	if err != nil {
		return false, err
	}
	for _, a := range addrs {
		if s.matches(a.IPNet) {
			return true, nil
		}
	}
	return false, nil
}

// listAddrs lists the addresses of the VIP's family on link.
func (s *settings) listAddrs(link netlink.Link) ([]netlink.Addr, error) {
	family := netlink.FAMILY_V4
	if s.addr.Is6() {
		family = netlink.FAMILY_V6
	}
	var addrs []netlink.Addr
	var err error
	for range 3 { // a dump interrupted by a concurrent change is retried
		addrs, err = netlink.AddrList(link, family)
		if !errors.Is(err, netlink.ErrDumpInterrupted) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("vip: list addresses of %s: %w", s.Interface, err)
	}
	return addrs, nil
}

// matches reports whether n is exactly the managed address and prefix.
func (s *settings) matches(n *net.IPNet) bool {
	if n == nil {
		return false
	}
	ones, bits := n.Mask.Size()
	if ones != s.Netmask || bits != s.addr.BitLen() {
		return false
	}
	ip := n.IP
	if s.addr.Is4() {
		ip = ip.To4()
	}
	return ip != nil && net.IP(s.addr.AsSlice()).Equal(ip) && len(ip) == len(s.addr.AsSlice())
}

// netRawError wraps a failed announcement (always ErrAnnounce); EPERM/EACCES
// on the raw socket mean the process lacks CAP_NET_RAW.
func netRawError(op string, err error) error {
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
		return fmt.Errorf("%w: %w (%s: %w)", ErrAnnounce, ErrNeedNetRaw, op, err)
	}
	return fmt.Errorf("%w: %s: %w", ErrAnnounce, op, err)
}

// deleteStray removes every address on the interface with the VIP's IP,
// whatever its prefix length, and returns what it removed. A missing
// interface is not an error: nothing is there.
func (s *settings) deleteStray() ([]netip.Prefix, error) {
	link, err := s.lookupLink()
	if errors.Is(err, ErrInterfaceNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	addrs, err := s.listAddrs(link)
	if err != nil {
		return nil, err
	}
	var removed []netip.Prefix
	var errs []error
	for _, a := range addrs {
		ip, ok := netip.AddrFromSlice(a.IP)
		if !ok || ip.Unmap() != s.addr {
			continue
		}
		ones, _ := a.Mask.Size()
		p := netip.PrefixFrom(s.addr, ones)
		err := netlink.AddrDel(link, &a)
		switch {
		case err == nil:
			removed = append(removed, p)
		case errors.Is(err, unix.EADDRNOTAVAIL), errors.Is(err, unix.ENODEV):
		default:
			errs = append(errs, s.netAdminError(fmt.Sprintf("remove %s from %s", p, s.Interface), err))
		}
	}
	return removed, errors.Join(errs...)
}
