package main

import (
	"fmt"
	"slices"
	"time"
)

// summary describes a set of measured durations.
type summary struct {
	n                     int
	min, median, p99, max time.Duration
}

// summarize sorts a copy of ds and takes nearest-rank percentiles.
func summarize(ds []time.Duration) summary {
	if len(ds) == 0 {
		return summary{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return summary{n: len(s), min: s[0], median: percentile(s, 50), p99: percentile(s, 99), max: s[len(s)-1]}
}

// percentile is the nearest-rank percentile p (0-100] of the sorted s.
func percentile(sorted []time.Duration, p float64) time.Duration {
	rank := int(float64(len(sorted))*p/100+0.999999) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}

// ms formats d in milliseconds with a precision that suits its size.
func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch {
	case v < 0 && v > -10, v >= 0 && v < 10:
		return fmt.Sprintf("%.2f ms", v)
	case v < 1000 && v > -1000:
		return fmt.Sprintf("%.1f ms", v)
	default:
		return fmt.Sprintf("%.0f ms", v)
	}
}

// floats summarises plain numbers the same way (median and p99).
func floats(vs []float64) (median, p99 float64) {
	if len(vs) == 0 {
		return 0, 0
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	at := func(p float64) float64 {
		rank := int(float64(len(s))*p/100+0.999999) - 1
		return s[min(max(rank, 0), len(s)-1)]
	}
	return at(50), at(99)
}
