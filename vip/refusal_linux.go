package vip

// Why the kernel refused an address change with EPERM or EACCES. These
// errnos do not always mean a missing capability: the kernel answers
// EACCES to an IPv6 address added to an interface whose IPv6 is disabled
// (net.ipv6.conf.<if>.disable_ipv6), whatever the caller's privileges.
// An agent running as root was told "CAP_NET_ADMIN is needed" there
// (issue 41, item 3). These run on the thread of the refused operation:
// in its network namespace, with its capabilities.

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// netAdminError wraps a failed netlink address change. EPERM/EACCES
// mean the process lacks CAP_NET_ADMIN only when it does: otherwise the
// error says the kernel's reason when it is known (IPv6 disabled on the
// interface), and that the refusal is not the capability's.
func (s *settings) netAdminError(op string, err error) error {
	if !errors.Is(err, unix.EPERM) && !errors.Is(err, unix.EACCES) {
		return fmt.Errorf("vip: %s: %w", op, err)
	}
	if why := s.refusedBecause(); why != "" {
		return fmt.Errorf("vip: %s: %s: %w", op, why, err)
	}
	if has, known := hasCapNetAdmin(); known && has {
		return fmt.Errorf("vip: %s: refused by the kernel although this process has CAP_NET_ADMIN: %w", op, err)
	}
	return fmt.Errorf("%w (%s: %w)", ErrNeedNetAdmin, op, err)
}

// refusedBecause is a reason other than privilege for which the kernel
// refuses the VIP on its interface now, "" when none is known.
func (s *settings) refusedBecause() string {
	if !s.addr.Is6() {
		return ""
	}
	// The namespace's own /proc/sys/net: the one of the thread reading it.
	file := "/proc/sys/net/ipv6/conf/" + s.Interface + "/disable_ipv6"
	b, err := os.ReadFile(file)
	if err != nil || strings.TrimSpace(string(b)) != "1" {
		return ""
	}
	return fmt.Sprintf("IPv6 is disabled on %s (net.ipv6.conf.%s.disable_ipv6 = 1)", s.Interface, s.Interface)
}

// hasCapNetAdmin reports whether the calling thread has CAP_NET_ADMIN in
// its effective set; known is false when that cannot be read.
func hasCapNetAdmin() (has, known bool) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false, false
	}
	c := unix.CAP_NET_ADMIN
	return data[c/32].Effective&(1<<(c%32)) != 0, true
}
