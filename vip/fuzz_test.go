package vip

// Fuzz targets for the VIP configuration the package parses: the address
// and the whole Config.
//
//	go test -run='^$' -fuzz='^FuzzParseAddress$' -fuzztime=10s ./vip
//	go test -run='^$' -fuzz='^FuzzConfigValidate$' -fuzztime=10s ./vip

import (
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"
)

var addressSeeds = []string{
	"10.0.0.100", "192.168.1.1", "2001:db8::100", "fd00::1", "1.2.3.4",
	"", "10.0.0.100/24", "10.0.0.256", "010.0.0.1", "10.0.0", "10.0.0.1.", " 10.0.0.1", "10.0.0.1\n",
	"0.0.0.0", "::", "127.0.0.1", "::1", "224.0.0.1", "ff02::1", "169.254.1.1", "fe80::1", "fe80::1%eth0",
	"255.255.255.255", "::ffff:10.0.0.1", "::ffff:1.2.3.4", "2001:db8::1%", "[2001:db8::1]", "2001:db8:::1",
	"1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8:9", "::10.0.0.1", "64:ff9b::10.0.0.1", "\xff", "１.２.３.４",
}

// FuzzParseAddress: parseAddress accepts only usable unicast addresses
// (no prefix, no zone, not loopback, multicast, link-local, unspecified,
// broadcast or IPv4-mapped), agrees with net.ParseIP, and what it accepts
// prints canonically and parses back to itself. Errors wrap
// ErrInvalidAddress.
func FuzzParseAddress(f *testing.F) {
	for _, s := range addressSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		addr, err := parseAddress(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidAddress) {
				t.Fatalf("parseAddress(%q) = %v, not ErrInvalidAddress", s, err)
			}
			return
		}
		checkUsable(t, s, addr)
		ip := net.ParseIP(s)
		if ip == nil || !ip.Equal(net.IP(addr.AsSlice())) {
			t.Fatalf("parseAddress(%q) = %v, net.ParseIP says %v", s, addr, ip)
		}
		again, err := parseAddress(addr.String())
		if err != nil || again != addr {
			t.Fatalf("canonical form %q of %q does not parse back: %v, %v", addr.String(), s, again, err)
		}
	})
}

func checkUsable(t *testing.T, s string, a netip.Addr) {
	t.Helper()
	if !a.IsValid() || a.Zone() != "" || a.Is4In6() || a.IsUnspecified() || a.IsLoopback() ||
		a.IsMulticast() || a.IsLinkLocalUnicast() || a == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
		t.Fatalf("parseAddress(%q) accepted %v, which is not a usable unicast address", s, a)
	}
	if strings.Contains(s, "/") {
		t.Fatalf("parseAddress(%q) accepted a prefix", s)
	}
}

// kernelValidName is the kernel's dev_valid_name, written from its source:
// 1 to IFNAMSIZ-1 (15) bytes of a C string, not "." or "..", and no '/',
// ':' or byte the kernel's isspace accepts (which includes 0xA0).
func kernelValidName(name string) bool {
	if name == "" || len(name) > 15 || name == "." || name == ".." {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch name[i] {
		case 0, '/', ':', ' ', '\t', '\n', '\v', '\f', '\r', 0xa0:
			return false
		}
	}
	return true
}

// FuzzConfigValidate: validate never panics; each error wraps exactly one of
// ErrInvalidAddress, ErrInvalidNetmask and ErrInvalidConfig; the interface
// name is accepted exactly when the kernel would accept it; and an accepted
// Config has its defaults, a prefix length that fits the address family,
// and a CIDR that parses back to its prefix.
func FuzzConfigValidate(f *testing.F) {
	for i, s := range addressSeeds {
		f.Add(s, 24, "eth0", 0, int64(0), int64(0))
		f.Add(s, 128, []string{"veth-a", "", ".", "..", "a/b", "a:1", "a b", "a\x00b", "abcdefghijklmnop", "eth0\xa0"}[i%10], i-5, int64(i-5), int64(5-i))
	}
	f.Add("10.0.0.1", 33, "eth0", 1, int64(time.Second), int64(time.Minute))
	// The kernel reads a name up to its first NUL ("eth0" here), and its
	// isspace includes 0xA0: both must be refused.
	f.Add("10.0.0.1", 24, "eth0\x00x", 0, int64(0), int64(0))
	f.Add("10.0.0.1", 24, "eth0\xa0", 0, int64(0), int64(0))
	f.Add("2001:db8::1", 129, "eth0", 3, int64(-1), int64(0))
	f.Fuzz(func(t *testing.T, address string, netmask int, iface string, count int, interval, refresh int64) {
		c := Config{Address: address, Netmask: netmask, Interface: iface, AnnounceCount: count,
			AnnounceInterval: time.Duration(interval), RefreshInterval: time.Duration(refresh)}
		s, err := c.validate()
		if err != nil {
			n := 0
			for _, sentinel := range []error{ErrInvalidAddress, ErrInvalidNetmask, ErrInvalidConfig} {
				if errors.Is(err, sentinel) {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("validate(%+v) = %v: wraps %d of the sentinel errors, want 1", c, err, n)
			}
			addr, aerr := parseAddress(address)
			if aerr == nil && netmask >= 1 && netmask <= addr.BitLen() && errors.Is(err, ErrInvalidConfig) &&
				strings.Contains(err.Error(), "Interface") && kernelValidName(iface) {
				t.Fatalf("interface name %q refused (%v), but the kernel accepts it", iface, err)
			}
			return
		}
		if !kernelValidName(iface) {
			t.Fatalf("interface name %q accepted, but the kernel's dev_valid_name refuses it (or reads another name)", iface)
		}
		checkUsable(t, address, s.addr)
		if s.Netmask < 1 || s.Netmask > s.addr.BitLen() || s.prefix.Bits() != s.Netmask || s.prefix.Addr() != s.addr {
			t.Fatalf("accepted %+v with prefix %v", c, s.prefix)
		}
		if p, err := netip.ParsePrefix(s.CIDR()); err != nil || p != s.prefix {
			t.Fatalf("CIDR %q does not parse back to %v: %v, %v", s.CIDR(), s.prefix, p, err)
		}
		if s.AnnounceCount < 1 || s.AnnounceInterval <= 0 || s.RefreshInterval < 0 || s.Logger == nil {
			t.Fatalf("defaults not applied: %+v", s.Config)
		}
	})
}
