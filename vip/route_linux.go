package vip

import (
	"errors"
	"fmt"
	"net"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// nlRoute is r as netlink wants it, out of link.
func nlRoute(r Route, link netlink.Link) *netlink.Route {
	nr := &netlink.Route{
		LinkIndex: link.Attrs().Index,
		Dst:       &net.IPNet{IP: net.IP(r.To.Addr().AsSlice()), Mask: net.CIDRMask(r.To.Bits(), r.To.Addr().BitLen())},
		Src:       net.IP(r.Src.AsSlice()),
		Priority:  r.Metric,
		Table:     r.Table,
		Scope:     netlink.SCOPE_UNIVERSE,
	}
	if r.Via.IsValid() {
		nr.Gw = net.IP(r.Via.AsSlice())
	} else {
		nr.Scope = netlink.SCOPE_LINK
	}
	return nr
}

// addRoutes adds the configured routes that are missing, in order; the
// address must be on the interface (a route's source must be local). It
// returns how many it added, and the first error, wrapping ErrRoute; the
// routes after a failed one are still tried.
func (s *settings) addRoutes() (added int, err error) {
	if len(s.routes) == 0 {
		return 0, nil
	}
	link, err := s.lookupLink()
	if err != nil {
		return 0, err
	}
	var errs []error
	for _, r := range s.routes {
		err := netlink.RouteAdd(nlRoute(r, link))
		switch {
		case err == nil:
			added++
		case errors.Is(err, unix.EEXIST):
		case errors.Is(err, unix.EPERM), errors.Is(err, unix.EACCES):
			e := s.netAdminError(fmt.Sprintf("add route %s dev %s", r, s.Interface), err)
			if !errors.Is(e, ErrNeedNetAdmin) { // a route refused otherwise is retried like any other
				e = fmt.Errorf("%w: %w", ErrRoute, e)
			}
			errs = append(errs, e)
		default:
			errs = append(errs, fmt.Errorf("%w: %s dev %s: %w", ErrRoute, r, s.Interface, err))
		}
	}
	return added, errors.Join(errs...)
}

// deleteRoutes removes the configured routes, in reverse order. A route
// or an interface that is already gone is not an error.
func (s *settings) deleteRoutes() error {
	if len(s.routes) == 0 {
		return nil
	}
	link, err := s.lookupLink()
	if errors.Is(err, ErrInterfaceNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for i := len(s.routes) - 1; i >= 0; i-- {
		r := s.routes[i]
		err := netlink.RouteDel(nlRoute(r, link))
		switch {
		case err == nil, errors.Is(err, unix.ESRCH), errors.Is(err, unix.ENODEV):
		default:
			errs = append(errs, s.netAdminError(fmt.Sprintf("remove route %s dev %s", r, s.Interface), err))
		}
	}
	return errors.Join(errs...)
}
