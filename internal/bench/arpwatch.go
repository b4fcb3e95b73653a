package main

import (
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"time"

	"github.com/mdlayher/arp"
	"github.com/vishvananda/netns"
)

// arpSeen is one ARP frame from a host, as the observer received it.
type arpSeen struct {
	at    time.Time
	mac   string // Ethernet source
	garp  bool   // gratuitous: sender IP = target IP = the VIP
	reply bool   // an answer to the observer's who-has VIP
}

// arpWatch is the observer: it receives every ARP frame on the bridge and
// asks who-has VIP every probe interval, on one raw socket (mdlayher/arp)
// made in the observer's namespace.
type arpWatch struct {
	c    *arp.Client
	vip  netip.Addr
	self string // the observer's MAC: its own probes are not the hosts'

	mu     sync.Mutex
	seen   []arpSeen
	probes []time.Time
	err    error // the reader's or the prober's, if one stopped early

	done chan struct{}
	wg   sync.WaitGroup
}

// watchARP starts the observer on ifname in the namespace at nsPath.
func watchARP(nsPath, ifname string, vip netip.Addr, every time.Duration) (*arpWatch, error) {
	var c *arp.Client
	var self string
	err := inNetNS(nsPath, func() error {
		ifi, err := net.InterfaceByName(ifname) // this thread's namespace
		if err != nil {
			return err
		}
		self = ifi.HardwareAddr.String()
		c, err = arp.Dial(ifi)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("ARP socket on %s in %s: %w", ifname, nsPath, err)
	}
	w := &arpWatch{c: c, vip: vip, self: self, done: make(chan struct{})}
	w.wg.Go(w.read)
	w.wg.Go(func() { w.probe(every) })
	return w, nil
}

// inNetNS runs fn on a new OS thread moved into the namespace at path.
// The thread stays locked, so it ends with its goroutine and never goes
// back to the pool in the wrong namespace. Sockets fn makes stay in that
// namespace and are usable from any goroutine.
func inNetNS(path string, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		ns, err := netns.GetFromPath(path)
		if err != nil {
			errc <- err
			return
		}
		defer ns.Close()
		if err := netns.Set(ns); err != nil {
			errc <- err
			return
		}
		errc <- fn()
	}()
	return <-errc
}

func (w *arpWatch) read() {
	for {
		p, eth, err := w.c.Read()
		at := time.Now()
		if err != nil {
			w.stopped(err)
			return
		}
		src := eth.Source.String()
		if src == w.self || p.SenderIP != w.vip {
			continue
		}
		s := arpSeen{at: at, mac: src, garp: p.TargetIP == w.vip,
			reply: p.Operation == arp.OperationReply && p.TargetIP != w.vip}
		w.mu.Lock()
		w.seen = append(w.seen, s)
		w.mu.Unlock()
	}
}

func (w *arpWatch) probe(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-w.done:
			return
		case <-t.C:
		}
		at := time.Now()
		if err := w.c.Request(w.vip); err != nil {
			w.stopped(err)
			return
		}
		w.mu.Lock()
		w.probes = append(w.probes, at)
		w.mu.Unlock()
	}
}

// stopped records why the reader or prober ended, unless on close.
func (w *arpWatch) stopped(err error) {
	select {
	case <-w.done:
		return
	default:
	}
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.mu.Unlock()
}

// close stops the observer.
func (w *arpWatch) close() {
	close(w.done)
	_ = w.c.Close()
	w.wg.Wait()
}

// firstGARP is the time of the first gratuitous ARP from mac at or after
// from.
func (w *arpWatch) firstGARP(mac string, from time.Time) (time.Time, bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range w.seen {
		if s.garp && s.mac == mac && !s.at.Before(from) {
			return s.at, true, nil
		}
	}
	return time.Time{}, false, w.err
}

// answered reports whether mac answered a probe at or after from.
func (w *arpWatch) answered(mac string, from time.Time) (bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := len(w.seen) - 1; i >= 0 && !w.seen[i].at.Before(from); i-- {
		if w.seen[i].reply && w.seen[i].mac == mac {
			return true, nil
		}
	}
	return false, w.err
}

// splitBrain is what the probes of one window show.
type splitBrain struct {
	probes    int           // probes sent
	both      int           // probes answered by both hosts
	backAgain bool          // a host answered again after the other had (A, B, A)
	silent    time.Duration // the longest time between answers of different hosts
}

// overlap is whether both hosts answered at any moment of the window.
func (s splitBrain) overlap() bool { return s.both > 0 || s.backAgain }

// splitBrain looks at the probe answers in [from, to). An answer belongs
// to the last probe sent before it arrived.
func (w *arpWatch) splitBrain(from, to time.Time) splitBrain {
	w.mu.Lock()
	defer w.mu.Unlock()
	var r splitBrain
	var probes []time.Time
	for _, p := range w.probes {
		if !p.Before(from) && p.Before(to) {
			probes = append(probes, p)
		}
	}
	r.probes = len(probes)
	round := map[int]map[string]bool{}
	var order []string // the hosts in the order they answered, runs collapsed
	var lastAt time.Time
	pi := 0
	for _, s := range w.seen {
		if !s.reply || s.at.Before(from) || !s.at.Before(to) {
			continue
		}
		for pi+1 < len(probes) && probes[pi+1].Before(s.at) {
			pi++
		}
		if round[pi] == nil {
			round[pi] = map[string]bool{}
		}
		round[pi][s.mac] = true
		if len(order) == 0 || order[len(order)-1] != s.mac {
			if len(order) > 0 {
				r.silent = max(r.silent, s.at.Sub(lastAt))
			}
			order = append(order, s.mac)
		}
		lastAt = s.at
	}
	for _, macs := range round {
		if len(macs) > 1 {
			r.both++
		}
	}
	r.backAgain = len(order) > 2
	return r
}

// forget drops what was seen before t.
func (w *arpWatch) forget(t time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	i := 0
	for i < len(w.seen) && w.seen[i].at.Before(t) {
		i++
	}
	w.seen = append([]arpSeen(nil), w.seen[i:]...)
	j := 0
	for j < len(w.probes) && w.probes[j].Before(t) {
		j++
	}
	w.probes = append([]time.Time(nil), w.probes[j:]...)
}
