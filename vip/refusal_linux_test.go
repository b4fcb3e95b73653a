package vip

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestIPv6DisabledIsNotAMissingCapability (issue 41, item 3): the kernel
// refuses an IPv6 address on an interface whose IPv6 is disabled with
// EACCES, to root too. The error says so, and does not blame
// CAP_NET_ADMIN, which the process has; without CAP_NET_ADMIN it still
// does (TestMissingCapNetAdmin).
func TestIPv6DisabledIsNotAMissingCapability(t *testing.T) {
	checkLeaks(t)
	p := newPair(t)
	if err := p.host.run(func() error {
		return os.WriteFile("/proc/sys/net/ipv6/conf/"+hostIf+"/disable_ipv6", []byte("1"), 0o644)
	}); err != nil {
		t.Fatalf("disable IPv6 on %s: %v", hostIf, err)
	}
	m := p.manager(t, Config{Address: vip6, Netmask: 64})
	err := m.Acquire(context.Background())
	t.Logf("IPv6 disabled: %v", err)
	switch {
	case err == nil:
		t.Fatal("Acquire succeeded on an interface whose IPv6 is disabled")
	case errors.Is(err, ErrNeedNetAdmin), strings.Contains(err.Error(), "CAP_NET_ADMIN is needed"):
		t.Fatalf("Acquire as root on an interface whose IPv6 is disabled blames CAP_NET_ADMIN: %v", err)
	case !strings.Contains(err.Error(), "IPv6 is disabled on "+hostIf), !errors.Is(err, unix.EACCES):
		t.Fatalf("Acquire on an interface whose IPv6 is disabled: %v; want the reason (IPv6 is disabled on %s) and the errno", err, hostIf)
	}
}
