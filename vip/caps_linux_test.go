package vip

import (
	"context"
	"errors"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// dropCapsRunner is the runner of a Manager whose process lacks caps: each
// operation runs on a fresh thread that enters the namespace and then
// drops caps from its own capability sets (capabilities are per thread on
// Linux; the thread dies afterwards).
func dropCapsRunner(path string, caps ...int) runner {
	return func(fn func() error) error {
		return onNewThread(func() error {
			if err := enterNetNS(path); err != nil {
				return err
			}
			hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
			var data [2]unix.CapUserData
			if err := unix.Capget(&hdr, &data[0]); err != nil {
				return err
			}
			for _, c := range caps {
				data[c/32].Effective &^= 1 << (c % 32)
				data[c/32].Permitted &^= 1 << (c % 32)
			}
			if err := unix.Capset(&hdr, &data[0]); err != nil {
				return err
			}
			return fn()
		})
	}
}

func TestMissingCapNetAdmin(t *testing.T) {
	checkLeaks(t)
	p := newPair(t)
	for _, addr := range []struct {
		ip   string
		mask int
	}{{vip4, 24}, {vip6, 64}} {
		m := p.manager(t, Config{Address: addr.ip, Netmask: addr.mask})
		m.run = dropCapsRunner(p.host.path, unix.CAP_NET_ADMIN)
		err := m.Acquire(context.Background())
		t.Logf("without CAP_NET_ADMIN: %v", err)
		switch {
		case !errors.Is(err, ErrNeedNetAdmin), !errors.Is(err, ErrPermission), !errors.Is(err, os.ErrPermission):
			t.Fatalf("Acquire without CAP_NET_ADMIN: %v; want ErrNeedNetAdmin, ErrPermission, os.ErrPermission", err)
		case errors.Is(err, ErrNeedNetRaw):
			t.Fatalf("Acquire without CAP_NET_ADMIN blames CAP_NET_RAW: %v", err)
		}
		if ok, _ := m.IsAcquired(context.Background()); ok {
			t.Fatal("address added without CAP_NET_ADMIN")
		}
		if err := m.Release(context.Background()); !errors.Is(err, ErrNeedNetAdmin) {
			t.Fatalf("Release without CAP_NET_ADMIN: %v; want ErrNeedNetAdmin", err)
		}
		m.run = newRunner(p.host.path) // for the cleanup's Release
	}
}

func TestMissingCapNetRaw(t *testing.T) {
	checkLeaks(t)
	p := newPair(t)
	for _, addr := range []struct {
		ip   string
		mask int
	}{{vip4, 24}, {vip6, 64}} {
		m := p.manager(t, Config{Address: addr.ip, Netmask: addr.mask, AnnounceCount: 1})
		m.run = dropCapsRunner(p.host.path, unix.CAP_NET_RAW)
		err := m.Acquire(context.Background())
		t.Logf("without CAP_NET_RAW: %v", err)
		switch {
		case !errors.Is(err, ErrNeedNetRaw), !errors.Is(err, ErrPermission), !errors.Is(err, ErrAnnounce):
			t.Fatalf("Acquire without CAP_NET_RAW: %v; want ErrNeedNetRaw, ErrPermission, ErrAnnounce", err)
		case errors.Is(err, ErrNeedNetAdmin):
			t.Fatalf("Acquire without CAP_NET_RAW blames CAP_NET_ADMIN: %v", err)
		}
		// The address itself needed only CAP_NET_ADMIN: it is there and held.
		if ok, err := m.IsAcquired(context.Background()); !ok || err != nil {
			t.Fatalf("IsAcquired = %v, %v; want true", ok, err)
		}
		if err := m.Release(context.Background()); err != nil {
			t.Fatalf("Release: %v", err)
		}
	}
}
