package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// haProc is one daemon of figure 9 (keepalived or go-cluster agent) in a
// process group of its own, its output in a file.
type haProc struct {
	cmd    *exec.Cmd
	log    string
	exited chan struct{}
}

// startHAProc runs argv with its output in logPath (created anew).
func startHAProc(argv []string, logPath string) (*haProc, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer f.Close() // the child has its own descriptor
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = f, f
	// A group of its own: SIGKILL reaches keepalived's VRRP child too
	// (killing only the parent makes the child shut down gracefully), and
	// a Ctrl-C on the terminal reaches only the benchmark, which cleans up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	p := &haProc{cmd: cmd, log: logPath, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	return p, nil
}

// terminate asks the daemon to stop: SIGTERM to its main process.
func (p *haProc) terminate() error { return p.cmd.Process.Signal(syscall.SIGTERM) }

// crash kills the daemon's whole process group with SIGKILL.
func (p *haProc) crash() error {
	err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil // already gone
	}
	return err
}

// waitExit waits until the main process has exited.
func (p *haProc) waitExit(timeout time.Duration) error {
	select {
	case <-p.exited:
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("%s did not exit within %v (log %s)", p.cmd.Path, timeout, p.log)
	}
}

// kill crashes the daemon and waits for it, at the end of a figure or on
// failure.
func (p *haProc) kill() {
	_ = p.crash()
	_ = p.waitExit(10 * time.Second)
}

// running reports whether the main process still runs.
func (p *haProc) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// logged reports whether the daemon's output contains s.
func (p *haProc) logged(s string) bool {
	b, err := os.ReadFile(p.log)
	return err == nil && strings.Contains(string(b), s)
}
