package runner

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// groupAlive reports whether process group pgid has a member that is not
// a zombie. kill(2) alone counts zombies: an orphan that has exited holds
// nothing, but may wait long for a reaper (a container's init that does
// not reap), so the members kill finds are looked up in /proc. Without
// /proc, kill's answer stands.
//
// No library is used: the one that lists processes with their group
// (gopsutil) is a large dependency for these few lines.
func groupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if state, group, ok := procState(e.Name()); ok && group == pgid && state != 'Z' {
			return true
		}
	}
	return false
}

// procState reads the state and process group of /proc/<pid>/stat: the
// fields "pid (comm) state ppid pgrp ...", comm possibly holding spaces
// and parentheses.
func procState(pid string) (state byte, pgrp int, ok bool) {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return 0, 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, false
	}
	pgrp, err = strconv.Atoi(string(f[2]))
	return f[0][0], pgrp, err == nil
}
