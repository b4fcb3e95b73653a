package arplab

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/mdlayher/arp"
	"github.com/mdlayher/ethernet"
	"github.com/mdlayher/packet"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// seen is one ARP frame from a host, as the observer received it.
type seen struct {
	// at is when the kernel received the frame (SO_TIMESTAMPNS), not when
	// the reader got to it: a reader stalled longer than a round of the
	// probes' tags (a loaded machine, a GC) would count an answer read
	// late against the next probe with its tag, which the other host may
	// have answered, a handover counted as both answering.
	at    time.Time
	read  time.Time  // when the reader read it
	mac   string     // Ethernet source
	garp  bool       // gratuitous: sender IP = target IP = the VIP
	reply bool       // an answer to the observer's who-has VIP
	tag   netip.Addr // a reply's target IP: the tag of the probe it answers
}

// probe is one who-has VIP the observer sent.
type probe struct {
	at  time.Time
	tag netip.Addr // its sender IP, which the answers are sent back to
}

// Probes are sent from tagCount sender IPs in turn, from tagBase up, so
// that an answer names the probe it answers even when it arrives after
// later probes were sent: with a probe every 2 ms, the tags come back
// round every 100 ms. How late the observer reads it does not matter: an
// answer is placed by when the kernel received it (seen.at).
const tagCount = 50

var tagBase = netip.MustParseAddr("192.0.2.150")

// Watch is the observer: it receives every ARP frame on the bridge and
// asks who-has VIP every probe interval, on one raw socket (mdlayher/arp)
// made in the observer's namespace. Its methods are safe for concurrent
// use.
type Watch struct {
	c      *arp.Client     // sends the probes
	raw    syscall.RawConn // the same socket, read with its kernel timestamps
	vip    netip.Addr
	self   string // the observer's MAC: its own probes are not the hosts'
	selfHW net.HardwareAddr

	// readGate is held by the reader around each read; a test holds it
	// to stall the reader as a loaded machine does.
	readGate sync.Mutex

	mu     sync.Mutex
	seen   []seen
	probes []probe
	err    error // the reader's or the prober's, if one stopped early

	done chan struct{}
	wg   sync.WaitGroup
}

// WatchARP starts the observer on ifname in the namespace at nsPath,
// asking who-has vip every interval. Close stops it.
func WatchARP(nsPath, ifname string, vip netip.Addr, every time.Duration) (*Watch, error) {
	var c *arp.Client
	var raw syscall.RawConn
	var selfHW net.HardwareAddr
	err := InNetNS(nsPath, func() error {
		ifi, err := net.InterfaceByName(ifname) // this thread's namespace
		if err != nil {
			return err
		}
		selfHW = ifi.HardwareAddr
		c, raw, err = dialStamped(ifi)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("ARP socket on %s in %s: %w", ifname, nsPath, err)
	}
	w := &Watch{c: c, raw: raw, vip: vip, self: selfHW.String(), selfHW: selfHW, done: make(chan struct{})}
	w.wg.Go(w.read)
	w.wg.Go(func() { w.probe(every) })
	return w, nil
}

// InNetNS runs fn on a new OS thread moved into the namespace at path.
// The thread stays locked, so it ends with its goroutine and never goes
// back to the pool in the wrong namespace. Sockets fn makes stay in that
// namespace and are usable from any goroutine.
func InNetNS(path string, fn func() error) error {
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

// dialStamped opens the observer's ARP socket on ifi (in the calling
// thread's namespace) with the kernel's receive timestamps on: an
// arp.Client to send with, and the socket to read.
func dialStamped(ifi *net.Interface) (*arp.Client, syscall.RawConn, error) {
	conn, err := packet.Listen(ifi, packet.Raw, unix.ETH_P_ARP, nil)
	if err != nil {
		return nil, nil, err
	}
	raw, err := conn.SyscallConn()
	if err == nil {
		cerr := raw.Control(func(fd uintptr) {
			err = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
		})
		err = errors.Join(cerr, err)
	}
	if err != nil {
		_ = conn.Close()
		return nil, nil, fmt.Errorf("SO_TIMESTAMPNS: %w", err)
	}
	c, err := arp.New(ifi, conn)
	if err != nil {
		_ = conn.Close()
		return nil, nil, err
	}
	return c, raw, nil
}

// readFrame reads one frame into buf and returns its length and when the
// kernel received it.
func (w *Watch) readFrame(buf, oob []byte) (int, time.Time, error) {
	var n, oobn int
	var rerr error
	err := w.raw.Read(func(fd uintptr) bool {
		n, oobn, _, _, rerr = unix.Recvmsg(int(fd), buf, oob, unix.MSG_DONTWAIT)
		return rerr != unix.EAGAIN
	})
	if err = errors.Join(err, rerr); err != nil {
		return 0, time.Time{}, err
	}
	at, err := kernelStamp(oob[:oobn])
	return n, at, err
}

// kernelStamp is the SCM_TIMESTAMPNS of a received frame's control
// messages.
func kernelStamp(oob []byte) (time.Time, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return time.Time{}, err
	}
	for _, m := range msgs {
		if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SCM_TIMESTAMPNS && len(m.Data) >= int(unsafe.Sizeof(unix.Timespec{})) {
			ts := (*unix.Timespec)(unsafe.Pointer(&m.Data[0]))
			return time.Unix(int64(ts.Sec), int64(ts.Nsec)), nil // int32 fields on 32-bit systems
		}
	}
	return time.Time{}, errors.New("a frame without its receive timestamp")
}

func (w *Watch) read() {
	buf := make([]byte, 128)
	oob := make([]byte, unix.CmsgSpace(int(unsafe.Sizeof(unix.Timespec{}))))
	for {
		w.readGate.Lock()
		//lint:ignore SA2001 a gate a test holds to stall the reader, not a critical section
		w.readGate.Unlock()
		n, at, err := w.readFrame(buf, oob)
		read := time.Now()
		if err != nil {
			w.stopped(err)
			return
		}
		var eth ethernet.Frame
		var p arp.Packet
		if eth.UnmarshalBinary(buf[:n]) != nil || eth.EtherType != ethernet.EtherTypeARP || p.UnmarshalBinary(eth.Payload) != nil {
			continue // not an Ethernet/IPv4 ARP frame
		}
		src := eth.Source.String()
		if src == w.self || p.SenderIP != w.vip {
			continue
		}
		s := seen{at: at, read: read, mac: src, garp: p.TargetIP == w.vip,
			reply: p.Operation == arp.OperationReply && p.TargetIP != w.vip, tag: p.TargetIP}
		w.mu.Lock()
		w.seen = append(w.seen, s)
		w.mu.Unlock()
	}
}

func (w *Watch) probe(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	broadcast := net.HardwareAddr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	tag := tagBase
	for i := 0; ; i++ {
		select {
		case <-w.done:
			return
		case <-t.C:
		}
		if i%tagCount == 0 {
			tag = tagBase
		}
		p, err := arp.NewPacket(arp.OperationRequest, w.selfHW, tag, net.HardwareAddr{0, 0, 0, 0, 0, 0}, w.vip)
		if err != nil {
			w.stopped(err)
			return
		}
		at := time.Now()
		if err := w.c.WriteTo(p, broadcast); err != nil {
			w.stopped(err)
			return
		}
		w.mu.Lock()
		w.probes = append(w.probes, probe{at: at, tag: tag})
		w.mu.Unlock()
		tag = tag.Next()
	}
}

// stopped records why the reader or prober ended, unless on close.
func (w *Watch) stopped(err error) {
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

// Close stops the observer.
func (w *Watch) Close() {
	close(w.done)
	_ = w.c.Close()
	w.wg.Wait()
}

// Err is why the observer stopped early, if it did.
func (w *Watch) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// FirstGARP is the time of the first gratuitous ARP from mac at or after
// from, and whether there was one.
func (w *Watch) FirstGARP(mac string, from time.Time) (time.Time, bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range w.seen {
		if s.garp && s.mac == mac && !s.at.Before(from) {
			return s.at, true, nil
		}
	}
	return time.Time{}, false, w.err
}

// FirstAnswer is the time of mac's first answer to a probe at or after
// from, and whether there was one.
func (w *Watch) FirstAnswer(mac string, from time.Time) (time.Time, bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range w.seen {
		if s.reply && s.mac == mac && !s.at.Before(from) {
			return s.at, true, nil
		}
	}
	return time.Time{}, false, w.err
}

// Answered reports whether mac answered a probe at or after from.
func (w *Watch) Answered(mac string, from time.Time) (bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := len(w.seen) - 1; i >= 0 && !w.seen[i].at.Before(from); i-- {
		if w.seen[i].reply && w.seen[i].mac == mac {
			return true, nil
		}
	}
	return false, w.err
}

// SplitBrain is what the probes of one window show.
type SplitBrain struct {
	Probes     int           // probes sent
	Both       int           // probes answered by more than one host
	Unanswered int           // probes, but the window's last, that no answer followed before the next
	BackAgain  bool          // a host answered again after the other had (A, B, A)
	Silent     time.Duration // the longest time between answers of different hosts: a handover's gap
	Quiet      time.Duration // the longest time without any answer, the window's ends included
	Answerers  []string      // the hosts' MACs in the order they answered, runs collapsed
	// ReadLate is the longest the observer took to read an answer after
	// the kernel received it: a loaded machine's stalls, which the
	// counts above do not depend on.
	ReadLate time.Duration
	// FirstBoth is the first probe answered by more than one host, nil
	// when none was: when it was sent and when each answer came.
	FirstBoth *BothAnswered
	// Late counts the answers that came more than lateAnswer after the
	// probe they answer, LateMax the latest; they are not counted in Both.
	Late    int
	LateMax time.Duration
}

// lateAnswer is how long after a probe an answer still counts towards
// Both: 200 times the longest a host took on a quiet lab (0.5 ms in 4,000
// answers), far below a probe's round of tags (100 ms). A host that
// answers later handled the request late (a stalled virtual CPU did it
// once: 103 ms, after the other host had answered in 26 us and released
// the VIP, both agents' logs in order); its answer shows that it held the
// VIP when it handled the request, not when the probe was sent, so it
// cannot show two hosts holding the VIP at once. A real overlap lasts
// long enough for prompt answers from both, which count.
const lateAnswer = 20 * time.Millisecond

// BothAnswered is one probe answered by more than one host.
type BothAnswered struct {
	Sent    time.Time
	Answers []Answer // in the order they came
}

// Answer is one host's answer to a probe.
type Answer struct {
	MAC string
	At  time.Time // when the observer's kernel received it
}

// String is the probe's time and each answer's delay after it.
func (b *BothAnswered) String() string {
	out := "probe sent " + b.Sent.UTC().Format("15:04:05.000000")
	for _, a := range b.Answers {
		out += fmt.Sprintf(", %s answered %v after", a.MAC, a.At.Sub(b.Sent).Round(time.Microsecond))
	}
	return out
}

// Overlap is whether both hosts answered at any moment of the window.
func (s SplitBrain) Overlap() bool { return s.Both > 0 || s.BackAgain }

// SplitBrain looks at the probe answers in [from, to). An answer belongs
// to the last probe with its tag sent before the kernel received it.
func (w *Watch) SplitBrain(from, to time.Time) SplitBrain {
	w.mu.Lock()
	defer w.mu.Unlock()
	var r SplitBrain
	var probes []probe
	for _, p := range w.probes {
		if !p.at.Before(from) && p.at.Before(to) {
			probes = append(probes, p)
		}
	}
	r.Probes = len(probes)
	round := map[int]map[string]bool{}
	answers := map[int][]Answer{}
	lastAt := from // the last answer of any host (the window's start before the first)
	pi := 0        // the last probe sent before the answer
	for _, s := range w.seen {
		if !s.reply || s.at.Before(from) || !s.at.Before(to) {
			continue
		}
		for pi+1 < len(probes) && probes[pi+1].at.Before(s.at) {
			pi++
		}
		i := answered(probes[:min(pi+1, len(probes))], s.tag)
		if i >= 0 && s.at.Sub(probes[i].at) > lateAnswer {
			r.Late++
			r.LateMax = max(r.LateMax, s.at.Sub(probes[i].at))
			i = -1
		}
		if i >= 0 {
			if round[i] == nil {
				round[i] = map[string]bool{}
			}
			round[i][s.mac] = true
			answers[i] = append(answers[i], Answer{MAC: s.mac, At: s.at})
		}
		if n := len(r.Answerers); n == 0 || r.Answerers[n-1] != s.mac {
			if n > 0 {
				r.Silent = max(r.Silent, s.at.Sub(lastAt))
			}
			r.Answerers = append(r.Answerers, s.mac)
		}
		r.Quiet = max(r.Quiet, s.at.Sub(lastAt))
		if !s.read.IsZero() {
			r.ReadLate = max(r.ReadLate, s.read.Sub(s.at))
		}
		lastAt = s.at
	}
	r.Quiet = max(r.Quiet, to.Sub(lastAt))
	for i := range max(len(probes)-1, 0) {
		if len(round[i]) == 0 {
			r.Unanswered++
		}
	}
	for i, macs := range round {
		if len(macs) > 1 {
			if r.FirstBoth == nil || probes[i].at.Before(r.FirstBoth.Sent) {
				r.FirstBoth = &BothAnswered{Sent: probes[i].at, Answers: answers[i]}
			}
			r.Both++
		}
	}
	r.BackAgain = len(r.Answerers) > 2
	return r
}

// answered is the index of the last of probes with tag, -1 if none.
func answered(probes []probe, tag netip.Addr) int {
	for i := len(probes) - 1; i >= 0; i-- {
		if probes[i].tag == tag {
			return i
		}
	}
	return -1
}

// Forget drops what was seen before t.
func (w *Watch) Forget(t time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	i := 0
	for i < len(w.seen) && w.seen[i].at.Before(t) {
		i++
	}
	w.seen = append([]seen(nil), w.seen[i:]...)
	j := 0
	for j < len(w.probes) && w.probes[j].at.Before(t) {
		j++
	}
	w.probes = append([]probe(nil), w.probes[j:]...)
}
