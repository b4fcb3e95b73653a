package chaos

import (
	"sort"
	"sync"
	"time"
)

// sampleEvery is how often the sampler asks every node whether it leads.
const sampleEvery = 5 * time.Millisecond

// Gap is a stretch of time during which no node led: from the last sample
// that saw a leader to the next one, with at least one sample in between
// where IsLeader was false on every node.
type Gap struct {
	Start    time.Time     // the last sample that saw a leader
	Duration time.Duration // until the next sample that saw one
}

// sampler measures availability: every sampleEvery it asks each running
// Node IsLeader, and keeps the time covered by samples with a leader and
// the gaps between them.
type sampler struct {
	mu      sync.Mutex
	led     time.Duration // time between consecutive samples that both saw a leader, or the later did
	total   time.Duration
	last    time.Time // previous sample
	lastLed time.Time // last sample that saw a leader; zero before the first
	without bool      // a sample since lastLed saw no leader
	gaps    []Gap
}

// sample records one observation at now.
func (s *sampler) sample(now time.Time, leading bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.last.IsZero() {
		d := now.Sub(s.last)
		s.total += d
		if leading {
			s.led += d
		}
	}
	s.last = now
	if !leading {
		s.without = true
		return
	}
	if !s.lastLed.IsZero() && s.without {
		s.gaps = append(s.gaps, Gap{Start: s.lastLed, Duration: now.Sub(s.lastLed)})
	}
	s.lastLed, s.without = now, false
}

// result returns availability (share of sampled time with a leader) and
// the gaps, longest first. A gap still open counts up to the last sample.
func (s *sampler) result() (float64, []Gap) {
	s.mu.Lock()
	defer s.mu.Unlock()
	gaps := append([]Gap(nil), s.gaps...)
	if !s.lastLed.IsZero() && s.without {
		gaps = append(gaps, Gap{Start: s.lastLed, Duration: s.last.Sub(s.lastLed)})
	}
	sort.Slice(gaps, func(i, j int) bool { return gaps[i].Duration > gaps[j].Duration })
	if s.total == 0 {
		return 0, gaps
	}
	return float64(s.led) / float64(s.total), gaps
}

// runSampler samples the members until stop is closed.
func (r *run) runSampler(stop <-chan struct{}) {
	tick := time.NewTicker(sampleEvery)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-tick.C:
			leading := false
			for _, m := range r.members {
				if n := m.current(); n != nil && n.IsLeader() {
					leading = true
					break
				}
			}
			r.samples.sample(now, leading)
		}
	}
}
