package faultproxy

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"
)

// mode is what the proxy does with the traffic of its connections.
type mode int

const (
	modeForward mode = iota
	modeCut
	modeBlackhole
	modeStall
	modeDelay
)

// dialTimeout bounds the connection to the target.
const dialTimeout = 5 * time.Second

// Proxy is a fault-injecting TCP proxy listening on 127.0.0.1. Its methods
// are safe for concurrent use. All its goroutines end by the time Close
// returns.
type Proxy struct {
	ln     net.Listener
	ctx    context.Context // cancelled by Close; ends dials in progress
	cancel context.CancelFunc
	wg     sync.WaitGroup // the accept loop and every connection's goroutines

	mu      sync.Mutex // guards the fields below
	target  string
	mode    mode
	delay   time.Duration // modeDelay: how late bytes from the target reach the client
	changed chan struct{} // closed, and replaced, on every mode change
	links   map[*link]struct{}
	closed  bool
}

// New starts a proxy listening on 127.0.0.1:0 that forwards each accepted
// connection to target (host:port). It fails the test if it cannot listen,
// and is closed at test cleanup.
func New(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("faultproxy: listen: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Proxy{
		ln:      ln,
		ctx:     ctx,
		cancel:  cancel,
		target:  target,
		changed: make(chan struct{}),
		links:   make(map[*link]struct{}),
	}
	p.wg.Go(p.acceptLoop)
	t.Cleanup(p.Close)
	return p
}

// Addr returns the address the proxy listens on, "127.0.0.1:PORT".
func (p *Proxy) Addr() string {
	return p.ln.Addr().String()
}

// URL returns "nats://" + Addr().
func (p *Proxy) URL() string {
	return "nats://" + p.Addr()
}

// Cut closes every current connection, and closes new ones immediately,
// until Restore.
func (p *Proxy) Cut() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.setModeLocked(modeCut)
	links := p.linksLocked(func(*link) bool { return true })
	p.mu.Unlock()
	closeLinks(links)
}

// Blackhole keeps connections open but silently drops all bytes in both
// directions, and does not pass on a close from either side: a stalled
// network, where the client sees no error, just silence. New connections are
// accepted and blackholed too (never reaching the target) until Restore.
func (p *Proxy) Blackhole() {
	p.setMode(modeBlackhole)
}

// Stall holds back all bytes (and closes) in both directions until Restore,
// which delivers them in order: a network that stops for a while and comes
// back before TCP gives up. Held bytes wait in the kernel's socket buffers
// (and one read per direction in the proxy), so a sender that writes a lot
// eventually blocks. New connections wait to be forwarded until Restore.
func (p *Proxy) Stall() {
	p.setMode(modeStall)
}

// Delay forwards as usual, except that bytes (and a close) from the target
// reach the client toClient late, in order: a slow return path, so that a
// request lands on the server while its reply arrives after the client's
// timeout. The client's bytes are not delayed. Bytes are stamped when the
// proxy reads them; those already on their way keep their stamp across a
// mode change, and later ones wait behind them. Restore ends it.
func (p *Proxy) Delay(toClient time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.delay = max(toClient, 0)
		p.setModeLocked(modeDelay)
	}
}

// Restore goes back to forwarding. Connections that lost bytes while
// blackholed are closed, so that their clients notice and reconnect at once;
// stalled connections deliver what was held back and carry on.
func (p *Proxy) Restore() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.setModeLocked(modeForward)
	broken := p.linksLocked(func(l *link) bool { return l.broken })
	p.mu.Unlock()
	closeLinks(broken)
}

// SetTarget changes the address that new connections are forwarded to;
// current connections keep theirs.
func (p *Proxy) SetTarget(target string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.target = target
}

// Close stops listening, closes every connection and waits for all the
// proxy's goroutines to end. It is idempotent.
func (p *Proxy) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.wg.Wait()
		return
	}
	p.closed = true
	p.setModeLocked(modeCut)
	links := p.linksLocked(func(*link) bool { return true })
	p.mu.Unlock()

	p.cancel()
	_ = p.ln.Close()
	closeLinks(links)
	p.wg.Wait()
}

// Conns returns the number of proxied connections currently open: accepted
// and not yet fully closed on both sides.
func (p *Proxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.links)
}

// lag is how late bytes from the target read now reach the client.
func (p *Proxy) lag() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mode != modeDelay {
		return 0
	}
	return p.delay
}

func (p *Proxy) setMode(m mode) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.setModeLocked(m)
	}
}

// setModeLocked switches the mode and wakes everything waiting on a change.
func (p *Proxy) setModeLocked(m mode) {
	p.mode = m
	close(p.changed)
	p.changed = make(chan struct{})
}

func (p *Proxy) linksLocked(keep func(*link) bool) []*link {
	var out []*link
	for l := range p.links {
		if keep(l) {
			out = append(out, l)
		}
	}
	return out
}

func closeLinks(links []*link) {
	for _, l := range links {
		l.close()
	}
}

func (p *Proxy) acceptLoop() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // listener closed
		}
		l := newLink(c)
		if !p.register(l) {
			l.close()
			continue
		}
		p.wg.Go(func() {
			defer p.unregister(l)
			p.serve(l)
		})
	}
}

// register adds l to the open links, unless the proxy is closed or cut.
func (p *Proxy) register(l *link) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.mode == modeCut {
		return false
	}
	p.links[l] = struct{}{}
	return true
}

func (p *Proxy) unregister(l *link) {
	l.close()
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.links, l)
}
