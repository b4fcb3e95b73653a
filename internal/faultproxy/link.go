package faultproxy

import (
	"bytes"
	"net"
	"sync"
	"time"
)

// link is one proxied connection: the accepted client side and, once dialled,
// the upstream side to the target.
type link struct {
	client net.Conn
	done   chan struct{} // closed by close

	// broken is set, under Proxy.mu, once bytes or a close were dropped
	// while blackholed: the byte stream can no longer be trusted.
	broken bool

	mu       sync.Mutex // guards upstream and closed
	upstream net.Conn
	closed   bool
}

func newLink(client net.Conn) *link {
	return &link{client: client, done: make(chan struct{})}
}

// setUpstream attaches the dialled upstream side; it reports false (and
// closes up) if the link was closed meanwhile.
func (l *link) setUpstream(up net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		_ = up.Close()
		return false
	}
	l.upstream = up
	return true
}

// close closes both sides; it is idempotent.
func (l *link) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.closed = true
	close(l.done)
	_ = l.client.Close()
	if l.upstream != nil {
		_ = l.upstream.Close()
	}
}

// action is what to do with the next event (bytes read, or a close) seen on
// one side of a link.
type action int

const (
	actForward action = iota // pass it on to the other side
	actDrop                  // swallow it silently
	actWait                  // hold it until the mode changes
	actClose                 // close the link
)

// decide returns the action for the next event on l under the current mode,
// and, for actWait, the channel closed on the next mode change. Deciding and
// marking l broken happen under one lock, so Restore closes every link that
// dropped anything.
func (p *Proxy) decide(l *link) (action, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch p.mode {
	case modeForward, modeDelay:
		if l.broken {
			return actClose, nil
		}
		return actForward, nil
	case modeBlackhole:
		l.broken = true
		return actDrop, nil
	case modeStall:
		return actWait, p.changed
	default:
		return actClose, nil
	}
}

// await returns the action for the next event on l, waiting while stalled.
func (p *Proxy) await(l *link) action {
	for {
		act, changed := p.decide(l)
		if act != actWait {
			return act
		}
		select {
		case <-changed:
		case <-l.done:
			return actClose
		}
	}
}

// serve runs one link until both its directions are done.
func (p *Proxy) serve(l *link) {
	switch p.await(l) {
	case actClose:
		return
	case actDrop:
		// Accepted while blackholed: never reaches the target. Swallow what
		// the client sends until the link is closed.
		p.pump(l, l.client, nil)
		return
	}

	p.mu.Lock()
	target := p.target
	p.mu.Unlock()
	d := net.Dialer{Timeout: dialTimeout}
	up, err := d.DialContext(p.ctx, "tcp", target)
	if err != nil {
		return // the client sees its connection closed, as if refused
	}
	if !l.setUpstream(up) {
		return
	}

	var wg sync.WaitGroup
	wg.Go(func() { p.pump(l, l.client, up) })
	p.pumpToClient(l, up)
	wg.Wait()
}

// pump copies src to dst (dst nil: nothing to copy to) as the mode allows,
// until src fails or the link is closed.
func (p *Proxy) pump(l *link, src, dst net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			switch p.await(l) {
			case actForward:
				if dst == nil {
					l.close()
					return
				}
				if _, werr := dst.Write(buf[:n]); werr != nil {
					l.close()
					return
				}
			case actClose:
				l.close()
				return
			}
		}
		if err != nil {
			// src closed or failed. Pass the close on, unless blackholed:
			// then the other side must not learn of it (it stays open, and
			// silent, until Restore, Cut or Close closes the broken link).
			if p.await(l) != actDrop {
				l.close()
			}
			return
		}
	}
}

// chunk is what was read from the target, or its close (eof), to be passed
// on to the client at due.
type chunk struct {
	data []byte
	eof  bool
	due  time.Time
}

// delayLineLen bounds the chunks on their way to the client, so that a
// client that does not read still holds the target back.
const delayLineLen = 64

// pumpToClient copies up to the client as pump does, through a delay line:
// each chunk is written at the time it was read plus the lag then in force
// (none unless Delay), in order.
func (p *Proxy) pumpToClient(l *link, up net.Conn) {
	line := make(chan chunk, delayLineLen)
	var wg sync.WaitGroup
	wg.Go(func() { p.deliver(l, line) })
	defer wg.Wait()
	defer close(line)
	send := func(c chunk) bool {
		select {
		case line <- c:
			return true
		case <-l.done:
			return false
		}
	}
	buf := make([]byte, 32<<10)
	for {
		n, err := up.Read(buf)
		if n > 0 {
			switch p.await(l) {
			case actForward:
				if !send(chunk{data: bytes.Clone(buf[:n]), due: time.Now().Add(p.lag())}) {
					return
				}
			case actClose:
				l.close()
				return
			}
		}
		if err != nil {
			// As in pump: a close is passed on (in its turn, behind the
			// bytes before it) unless blackholed.
			if p.await(l) != actDrop {
				send(chunk{eof: true, due: time.Now().Add(p.lag())})
			}
			return
		}
	}
}

// deliver writes the chunks of line to the client, each at its due time,
// until line is closed or the link is.
func (p *Proxy) deliver(l *link, line <-chan chunk) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for c := range line {
		if wait := time.Until(c.due); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-l.done:
				return
			}
		}
		if c.eof {
			l.close()
			return
		}
		if _, err := l.client.Write(c.data); err != nil {
			l.close()
			return
		}
	}
}
