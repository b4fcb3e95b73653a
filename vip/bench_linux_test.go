package vip

import (
	"context"
	"net/netip"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdlayher/arp"
)

// The benchmarks compare this package with the way the original
// implementation worked: running `ip addr add` and `arping` (Debian
// packages iproute2 and arping). Everything runs inside a test network
// namespace. They are skipped when the tools are missing.
//
//	go test -run '^$' -bench . -benchtime 2s ./vip/
//
// (about 6 minutes of wall time: each untimed Release after a timed Acquire,
// and each settle, waits 10-15 ms for the kernel to close an AF_PACKET socket.)
//
// Sub-benchmarks:
//
//	vip           this package, called on a thread already in the namespace
//	vip-netns     this package with Config.NetNS (enters the namespace per operation)
//	ip+arping     ip addr add + arping -U -c 1 (as the old code ran it; arping then
//	              waits for a reply that never comes to an unsolicited ARP: ~1 s)
//	ip+arping-w0  the same with -w 0, arping's fastest: send and exit
//
// BenchmarkRelease times the release of a held address whose announcement
// sockets are closed (see settle); a Release within ~15 ms of an
// announcement also waits for that socket to close.
//
// frames/op is the number of gratuitous ARP frames the peer received per
// operation, to show that each variant really announced.

// arpCounter counts gratuitous ARP frames for an address seen on the peer.
type arpCounter struct{ n atomic.Int64 }

func (ns *testNS) countARP(tb testing.TB, ifname string, from netip.Addr) *arpCounter {
	tb.Helper()
	var c *arp.Client
	err := ns.run(func() (err error) {
		ifi, err := ifaceOf(ns, ifname)
		if err != nil {
			return err
		}
		c, err = arp.Dial(ifi)
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	cnt := &arpCounter{}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			p, _, err := c.Read()
			if err != nil {
				return
			}
			if p.SenderIP == from && p.TargetIP == from {
				cnt.n.Add(1)
			}
		}
	})
	tb.Cleanup(func() { c.Close(); wg.Wait() })
	return cnt
}

// report waits briefly for frames still in flight and reports frames/op.
func (c *arpCounter) report(b *testing.B, before int64, perOp int) {
	want := before + int64(b.N*perOp)
	deadline := time.Now().Add(2 * time.Second)
	for c.n.Load() < want && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	b.ReportMetric(float64(c.n.Load()-before)/float64(b.N), "frames/op")
}

// inNS runs fn on a thread inside ns (commands it starts inherit the
// namespace), and waits.
func inNS(b *testing.B, ns *testNS, fn func()) {
	b.Helper()
	if err := onNewThread(func() error {
		if err := enterNetNS(ns.path); err != nil {
			return err
		}
		fn()
		return nil
	}); err != nil {
		b.Fatal(err)
	}
}

// settle waits until m's keeper has closed the sockets of the
// announcements sent so far, as it has long done when a held address is
// released in practice (closing an AF_PACKET socket takes 10-15 ms in the
// kernel and happens off the critical path).
func settle(b *testing.B, m *Manager) {
	for {
		m.mu.Lock()
		n := int32(0)
		if m.keeper != nil {
			n = m.keeper.closing.Load()
		}
		m.mu.Unlock()
		if n == 0 {
			return
		}
		time.Sleep(100 * time.Microsecond)
	}
}

func lookTools(b *testing.B) {
	for _, tool := range []string{"ip", "arping"} {
		if _, err := exec.LookPath(tool); err != nil {
			b.Skipf("%s not installed (Debian: apt-get install -y iproute2 arping): %v", tool, err)
		}
	}
}

func run(b *testing.B, name string, args ...string) {
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		b.Fatalf("%s %v: %v: %s", name, args, err, out)
	}
}

// runArping runs arping; it exits 1 when no reply came, which is normal
// for an unsolicited ARP, so the exit status is not checked (frames/op is).
func runArping(args ...string) {
	_ = exec.Command("arping", args...).Run()
}

func BenchmarkAcquireAnnounce(b *testing.B) {
	lookTools(b)
	p := newPair(b)
	vip := netip.MustParseAddr(vip4)
	frames := p.peer.countARP(b, peerIf, vip)
	cidr := vip4 + "/24"
	cfg := Config{Address: vip4, Netmask: 24, Interface: hostIf, AnnounceCount: 1, Logger: discardLogger()}
	ctx := context.Background()

	b.Run("vip", func(b *testing.B) {
		m, err := NewManager(cfg)
		if err != nil {
			b.Fatal(err)
		}
		before := frames.n.Load()
		inNS(b, p.host, func() {
			b.ResetTimer()
			for range b.N {
				if err := m.Acquire(ctx); err != nil {
					b.Error(err)
					return
				}
				b.StopTimer()
				if err := m.Release(ctx); err != nil {
					b.Error(err)
					return
				}
				b.StartTimer()
			}
		})
		frames.report(b, before, 2)
	})
	b.Run("vip-netns", func(b *testing.B) {
		c := cfg
		c.NetNS = p.host.path
		m, err := NewManager(c)
		if err != nil {
			b.Fatal(err)
		}
		before := frames.n.Load()
		b.ResetTimer()
		for range b.N {
			if err := m.Acquire(ctx); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if err := m.Release(ctx); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		frames.report(b, before, 2)
	})
	for _, v := range []struct {
		name  string
		extra []string
	}{{"ip+arping", nil}, {"ip+arping-w0", []string{"-w", "0"}}} {
		b.Run(v.name, func(b *testing.B) {
			args := append([]string{"-q", "-U", "-c", "1", "-i", hostIf, "-S", vip4}, v.extra...)
			args = append(args, vip4)
			before := frames.n.Load()
			inNS(b, p.host, func() {
				b.ResetTimer()
				for range b.N {
					run(b, "ip", "addr", "add", cidr, "dev", hostIf)
					runArping(args...)
					b.StopTimer()
					run(b, "ip", "addr", "del", cidr, "dev", hostIf)
					b.StartTimer()
				}
			})
			frames.report(b, before, 1)
		})
	}
}

func BenchmarkRelease(b *testing.B) {
	lookTools(b)
	p := newPair(b)
	cidr := vip4 + "/24"
	cfg := Config{Address: vip4, Netmask: 24, Interface: hostIf, AnnounceCount: 1, Logger: discardLogger()}
	ctx := context.Background()

	b.Run("vip", func(b *testing.B) {
		m, err := NewManager(cfg)
		if err != nil {
			b.Fatal(err)
		}
		inNS(b, p.host, func() {
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				if err := m.Acquire(ctx); err != nil {
					b.Error(err)
					return
				}
				settle(b, m)
				b.StartTimer()
				if err := m.Release(ctx); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("vip-netns", func(b *testing.B) {
		c := cfg
		c.NetNS = p.host.path
		m, err := NewManager(c)
		if err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for range b.N {
			b.StopTimer()
			if err := m.Acquire(ctx); err != nil {
				b.Fatal(err)
			}
			settle(b, m)
			b.StartTimer()
			if err := m.Release(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ip", func(b *testing.B) {
		inNS(b, p.host, func() {
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				run(b, "ip", "addr", "add", cidr, "dev", hostIf)
				b.StartTimer()
				run(b, "ip", "addr", "del", cidr, "dev", hostIf)
			}
		})
	})
}
