package sim

import "time"

// trace keeps the last lines of a window of a run, for a failing seed.
type trace struct {
	from, to time.Duration // the window
	keep     int           // at most this many lines, the last ones
	all      []string
}

func (t *trace) add(line string) { t.all = append(t.all, line) }

func (t *trace) lines() []string {
	if len(t.all) > t.keep {
		return t.all[len(t.all)-t.keep:]
	}
	return t.all
}
