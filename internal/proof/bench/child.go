package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// child is a nats-server running in a child process of this program.
type child struct {
	spec   serverSpec
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	exited chan struct{}
}

// startChild starts spec in a new process and waits until it accepts
// clients.
func startChild(spec serverSpec) (*child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, spec.args()...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start server %s: %w", spec.name, err)
	}
	c := &child{spec: spec, cmd: cmd, stdin: stdin, exited: make(chan struct{})}
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		ok := false
		for sc.Scan() {
			if !ok && sc.Text() == "ready" {
				ok = true
				ready <- nil
			}
		}
		if !ok {
			ready <- errors.New("exited before ready")
		}
	}()
	go func() { _ = cmd.Wait(); close(c.exited) }()
	select {
	case err = <-ready:
	case <-time.After(40 * time.Second):
		err = errors.New("not ready after 40s")
	}
	if err != nil {
		c.kill()
		return nil, fmt.Errorf("server %s: %w", spec.name, err)
	}
	return c, nil
}

// url is the client URL.
func (c *child) url() string { return fmt.Sprintf("nats://127.0.0.1:%d", c.spec.port) }

// monitor reads the child's HTTP monitoring endpoint.
func (c *child) monitor() httpMonitor {
	return newHTTPMonitor(fmt.Sprintf("http://127.0.0.1:%d", c.spec.httpPort))
}

// stop shuts the server down gracefully (SIGTERM: it hands its raft
// leaderships over first) and waits for the process.
func (c *child) stop() {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(30 * time.Second):
		c.kill()
	}
}

// kill ends the process at once, like a crash, and waits for it.
func (c *child) kill() {
	_ = c.cmd.Process.Kill()
	<-c.exited
}

// cpu is the CPU time the process has used (user + system).
func (c *child) cpu() (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command name, which is in parentheses and may hold spaces.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc stat")
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	const clockTicks = 100 // USER_HZ on Linux
	return time.Duration(ut+st) * time.Second / clockTicks, nil
}

// rss is the resident memory of the process, in bytes.
func (c *child) rss() (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no VmRSS")
}

// waitHealthy polls the child's /healthz until JetStream is ready (and,
// in a cluster, current with the meta leader).
func (c *child) waitHealthy(ctx context.Context) error {
	m := c.monitor()
	var last error
	for {
		var v map[string]any
		if last = m.get(ctx, "/healthz", &v); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("server %s not healthy: %w (%v)", c.spec.name, ctx.Err(), last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
