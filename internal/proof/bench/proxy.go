package main

import (
	"net"
	"sync"
	"sync/atomic"
)

// proxy is a loopback TCP proxy in front of a NATS server for one client.
// Blackholing it drops every byte both ways without closing anything: the
// client is cut off from NATS and sees silence, not an error, like a
// partitioned or frozen host.
type proxy struct {
	ln     net.Listener
	target string
	hole   atomic.Bool
	mu     sync.Mutex
	conns  []net.Conn
	wg     sync.WaitGroup
}

func newProxy(target string) (*proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &proxy{ln: ln, target: target}
	p.wg.Go(p.accept)
	return p, nil
}

// url is the address clients dial.
func (p *proxy) url() string { return "nats://" + p.ln.Addr().String() }

// blackhole silently drops all traffic from now on.
func (p *proxy) blackhole() { p.hole.Store(true) }

func (p *proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		p.wg.Go(func() { p.pipe(s, c) })
		p.wg.Go(func() { p.pipe(c, s) })
	}
}

// pipe copies src to dst until src fails, dropping bytes while blackholed.
func (p *proxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !p.hole.Load() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !p.hole.Load() {
				dst.Close()
			}
			return
		}
	}
}

// close stops the proxy and closes its connections.
func (p *proxy) close() {
	p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}
