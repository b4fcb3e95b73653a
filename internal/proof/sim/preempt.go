package sim

// P13 after a pause (issue 41, item 5): a node that may preempt asks a
// holder of lower priority to hand over no sooner than its preempt delay
// after it resumed from a pause, as after a restart. A behaviour
// property, checked at every ask, not a safety one: an early ask moves
// the lease by a named handover, never to two holders. The machine sees a
// pause as a look later than planned by more than a renewal period (at
// most RenewInterval) and, while it may preempt, plans a look at least
// once a renewal period: a pause of more than two RenewIntervals on its
// clock is always seen, and only those are held to it.

import "time"

// resumed records that p resumed now from a pause that began at from.
func (c *checker) resumed(p *proc, from, now time.Duration) {
	if pause := p.local(now).Sub(p.local(from)); pause > 2*p.cfg.RenewInterval {
		c.resumes[p] = resume{at: now, pause: pause}
	}
}

// resume is the last pause a process came back from that it must see.
type resume struct {
	at    time.Duration
	pause time.Duration // on the node's clock
}

// asked checks p's request to holder against its last resume.
func (c *checker) asked(p *proc, holder string) {
	r, ok := c.resumes[p]
	if !ok {
		return
	}
	delay := max(p.cfg.LeaseTTL, p.cfg.PreemptDelay)
	if since := p.local(p.w.now).Sub(p.local(r.at)); since < delay {
		c.violate(p.w.now, "P13: %s asked %s to hand over %v after it resumed from a pause of %v, before its preempt delay (%v)",
			p.cfg.NodeID, holder, since.Round(time.Millisecond), r.pause.Round(time.Millisecond), delay)
	}
}
