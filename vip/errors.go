package vip

import (
	"errors"
	"fmt"
)

// Sentinel errors, for errors.Is. An error with a cause the caller can act
// on wraps one of them, with the address, interface and operation in its
// message; other kernel failures wrap the errno (a syscall.Errno) instead.
var (
	// ErrInvalidConfig: a Config field other than Address and Netmask is
	// out of range (interface name, announcement count or intervals).
	ErrInvalidConfig = errors.New("vip: invalid config")

	// ErrInvalidAddress: Config.Address is not a usable unicast IPv4 or
	// IPv6 address.
	ErrInvalidAddress = errors.New("vip: invalid address")

	// ErrInvalidNetmask: Config.Netmask is not a prefix length between 1
	// and 32 (IPv4) or 1 and 128 (IPv6).
	ErrInvalidNetmask = errors.New("vip: invalid netmask")

	// ErrInterfaceNotFound: no network interface with the configured name
	// exists (in the configured network namespace) at the time of the
	// operation.
	ErrInterfaceNotFound = errors.New("vip: interface not found")

	// ErrInterfaceDown: the configured interface exists but is
	// administratively down or has no carrier, so an address on it
	// reaches no one. Reported by Monitor (see InterfaceError).
	ErrInterfaceDown = errors.New("vip: interface down")

	// ErrPermission: the kernel refused an operation for lack of
	// privilege. The error also wraps ErrNeedNetAdmin or ErrNeedNetRaw,
	// saying which capability is missing, and the errno (so
	// errors.Is(err, os.ErrPermission) holds too).
	ErrPermission = errors.New("vip: permission denied")

	// ErrNeedNetAdmin: adding or removing the address was refused: the
	// process needs CAP_NET_ADMIN. Wraps ErrPermission. A refusal (EPERM,
	// EACCES) of a process that has CAP_NET_ADMIN is not this error: it
	// gives the kernel's reason where it is known (IPv6 disabled on the
	// interface) and wraps the errno.
	ErrNeedNetAdmin = fmt.Errorf("%w: CAP_NET_ADMIN is needed to add or remove addresses", ErrPermission)

	// ErrNeedNetRaw: opening the raw socket that sends the announcement
	// (gratuitous ARP or neighbour advertisement) was refused: the process
	// needs CAP_NET_RAW. Wraps ErrPermission.
	ErrNeedNetRaw = fmt.Errorf("%w: CAP_NET_RAW is needed to send gratuitous ARP / neighbour advertisements", ErrPermission)

	// ErrAnnounce: the address is on the interface but announcing it to
	// the network failed (for example the link is down). The manager keeps
	// the address and retries the announcement in the background.
	ErrAnnounce = errors.New("vip: announcement failed")

	// ErrRoute: the address is on the interface but one of Config.Routes
	// could not be added (its gateway unreachable, say). The Manager
	// keeps the address and retries the routes in the background, and
	// Hooks keeps retrying the acquisition (it does not count as held).
	ErrRoute = errors.New("vip: route not added")

	// ErrNetNS: the network namespace named by Config.NetNS could not be
	// opened or entered.
	ErrNetNS = errors.New("vip: cannot enter network namespace")

	// ErrUnsupported: the package needs Linux (netlink, AF_PACKET). On
	// other systems NewManager returns it. It wraps errors.ErrUnsupported.
	ErrUnsupported = fmt.Errorf("vip: %w: virtual IP management needs Linux", errors.ErrUnsupported)
)
