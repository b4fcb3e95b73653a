package vip

import (
	"fmt"
	"log/slog"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Defaults applied by NewManager to zero Config fields.
const (
	// DefaultAnnounceCount is the number of announcement rounds sent
	// after the address is added: one right away, the rest spaced by
	// AnnounceInterval.
	DefaultAnnounceCount = 3
	// DefaultAnnounceInterval is the pause between announcement rounds.
	DefaultAnnounceInterval = 200 * time.Millisecond
)

// Config describes one virtual IP address.
type Config struct {
	// Address is the IPv4 or IPv6 address to manage, without a prefix
	// ("10.0.0.100", "2001:db8::100").
	Address string
	// Netmask is the prefix length in CIDR notation (24 for
	// 255.255.255.0): 1-32 for IPv4, 1-128 for IPv6.
	Netmask int
	// Interface is the name of the network interface ("eth0"). It is
	// looked up on every operation, so an interface that is re-created
	// (new index, same name) keeps working.
	Interface string
	// Logger receives structured logs. Default slog.Default().
	Logger *slog.Logger

	// AnnounceCount is the number of announcement rounds sent each time
	// the address is (re)added. A round is a gratuitous ARP request and a
	// gratuitous ARP reply for IPv4, an unsolicited neighbour
	// advertisement for IPv6. The first round is sent before Acquire
	// returns, the others in the background. Default DefaultAnnounceCount.
	AnnounceCount int
	// AnnounceInterval is the pause between rounds of a burst. Default
	// DefaultAnnounceInterval.
	AnnounceInterval time.Duration
	// RefreshInterval, when positive, makes the manager check the
	// address and send one announcement round every RefreshInterval while
	// it holds the address (for switches that age out entries, or peers
	// that missed the burst). Zero turns periodic refresh off; removals
	// are still repaired at once from netlink events.
	RefreshInterval time.Duration
	// NetNS is the path of a network namespace to work in, such as
	// "/var/run/netns/blue" or "/proc/1234/ns/net". Empty means the
	// namespace of the calling process. With NetNS set, every kernel
	// operation runs on a dedicated OS thread that enters the namespace,
	// so the Manager can be used from any goroutine.
	NetNS string

	// Label is the IPv4 address label ("eth0:vip", what `ip addr` shows
	// and ifconfig's alias interfaces use): Interface, a colon and a name,
	// at most 15 bytes. Empty: no label. IPv6 addresses have none.
	Label string
	// Routes are added after the address on every acquisition (and put
	// back when the address is restored) and removed before it on
	// release, like keepalived's virtual_routes. Each goes out of
	// Interface, with the VIP as its source unless Route.Src says
	// otherwise.
	Routes []Route
}

// CIDR returns the address with its prefix length, "<Address>/<Netmask>",
// as the `ip` command writes it. It does not validate; an invalid Config
// gives a string NewManager would reject.
func (c Config) CIDR() string {
	return c.Address + "/" + strconv.Itoa(c.Netmask)
}

// settings is a validated Config with defaults applied.
type settings struct {
	Config
	addr   netip.Addr   // the address, unmapped, no zone
	prefix netip.Prefix // addr/Netmask (not masked: the host bits are kept)
	routes []Route      // Config.Routes with Src defaulted to addr
}

// validate checks c and applies defaults.
func (c Config) validate() (settings, error) {
	addr, err := parseAddress(c.Address)
	if err != nil {
		return settings{}, err
	}
	bits := addr.BitLen()
	if c.Netmask < 1 || c.Netmask > bits {
		return settings{}, fmt.Errorf("%w: %d for %s (want 1-%d)", ErrInvalidNetmask, c.Netmask, addr, bits)
	}
	if err := validateInterfaceName(c.Interface); err != nil {
		return settings{}, err
	}
	if err := validateLabel(c.Label, c.Interface, addr); err != nil {
		return settings{}, err
	}
	routes, err := validateRoutes(c.Routes, addr)
	if err != nil {
		return settings{}, err
	}
	if c.AnnounceCount < 0 {
		return settings{}, fmt.Errorf("%w: AnnounceCount %d is negative", ErrInvalidConfig, c.AnnounceCount)
	}
	if c.AnnounceInterval < 0 {
		return settings{}, fmt.Errorf("%w: AnnounceInterval %v is negative", ErrInvalidConfig, c.AnnounceInterval)
	}
	if c.RefreshInterval < 0 {
		return settings{}, fmt.Errorf("%w: RefreshInterval %v is negative", ErrInvalidConfig, c.RefreshInterval)
	}
	if c.AnnounceCount == 0 {
		c.AnnounceCount = DefaultAnnounceCount
	}
	if c.AnnounceInterval == 0 {
		c.AnnounceInterval = DefaultAnnounceInterval
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	c.Address = addr.String()
	c.Routes = append([]Route(nil), c.Routes...) // the caller's slice may change
	return settings{Config: c, addr: addr, prefix: netip.PrefixFrom(addr, c.Netmask), routes: routes}, nil
}

// parseAddress accepts a unicast IPv4 or IPv6 address without prefix or zone.
func parseAddress(s string) (netip.Addr, error) {
	if s == "" {
		return netip.Addr{}, fmt.Errorf("%w: Address is empty", ErrInvalidAddress)
	}
	if strings.Contains(s, "/") {
		return netip.Addr{}, fmt.Errorf("%w: %q: give the prefix length in Netmask, not in Address", ErrInvalidAddress, s)
	}
	addr, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("%w: %q: %w", ErrInvalidAddress, s, err)
	}
	switch {
	case addr.Zone() != "":
		return netip.Addr{}, fmt.Errorf("%w: %q: zones are not allowed (the interface is Config.Interface)", ErrInvalidAddress, s)
	case addr.Is4In6():
		return netip.Addr{}, fmt.Errorf("%w: %q: IPv4-mapped IPv6 address; write it as IPv4", ErrInvalidAddress, s)
	case addr.IsUnspecified():
		return netip.Addr{}, fmt.Errorf("%w: %q is the unspecified address", ErrInvalidAddress, s)
	case addr.IsLoopback():
		return netip.Addr{}, fmt.Errorf("%w: %q is a loopback address", ErrInvalidAddress, s)
	case addr.IsMulticast():
		return netip.Addr{}, fmt.Errorf("%w: %q is a multicast address", ErrInvalidAddress, s)
	case addr.IsLinkLocalUnicast():
		return netip.Addr{}, fmt.Errorf("%w: %q is link-local", ErrInvalidAddress, s)
	case addr == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return netip.Addr{}, fmt.Errorf("%w: %q is the broadcast address", ErrInvalidAddress, s)
	}
	return addr, nil
}

// validateInterfaceName applies the kernel's rules for link names
// (dev_valid_name): 1-15 bytes, not "." or "..", no '/', ':', NUL or white space
// (the kernel counts byte 0xA0 as white space).
func validateInterfaceName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: Interface is empty", ErrInvalidConfig)
	}
	if len(name) > 15 || name == "." || name == ".." || strings.ContainsAny(name, "/: \t\n\r\v\f") ||
		strings.IndexByte(name, 0) >= 0 || strings.IndexByte(name, 0xa0) >= 0 { // bytes, not runes: 0xA0 alone is not UTF-8
		return fmt.Errorf("%w: Interface %q is not a valid interface name", ErrInvalidConfig, name)
	}
	return nil
}
