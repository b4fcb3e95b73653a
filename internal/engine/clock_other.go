//go:build !linux

package engine

import "time"

// bootTime is the monotonic clock's time since the process started: only
// Linux has CLOCK_BOOTTIME here, and elsewhere a suspension is not
// counted (docs/production.md).
func bootTime() time.Duration { return time.Since(processStart) }
