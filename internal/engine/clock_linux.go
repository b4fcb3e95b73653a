package engine

import (
	"time"

	"golang.org/x/sys/unix"
)

// bootTime is CLOCK_BOOTTIME: time since boot, suspensions included.
func bootTime() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return time.Since(processStart) // no such clock: the monotonic one
	}
	return time.Duration(ts.Nano())
}
