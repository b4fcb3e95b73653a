package runner

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Stdio is where a child's standard streams go; nil means /dev/null.
type Stdio struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// Child is a command running in a process group of its own, killed by the
// kernel if the process that started it dies.
type Child struct {
	cmd  *exec.Cmd
	done chan struct{}
	code int
}

// StartChild starts argv with env (added to this process's environment).
// The child leads a new process group, so that signals reach whatever it
// starts too, and gets SIGKILL if this process dies (Pdeathsig).
func StartChild(argv, env []string, stdio Stdio) (*Child, error) {
	if len(argv) == 0 {
		return nil, errors.New("no command to run")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(cmd.Environ(), env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdio.Stdin, stdio.Stdout, stdio.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	c := &Child{cmd: cmd, done: make(chan struct{})}
	go c.wait()
	return c, nil
}

// wait reaps the child, then kills what is left of its process group:
// nothing it started may outlive it.
func (c *Child) wait() {
	_ = c.cmd.Wait() // the status is in ProcessState
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	c.code = exitStatus(c.cmd.ProcessState)
	close(c.done)
}

// exitStatus is the status a shell would report: the exit code, or 128 +
// the signal that killed the process.
func exitStatus(ps *os.ProcessState) int {
	if ps == nil {
		return 1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// Pid is the child's process ID, which is also its process group's.
func (c *Child) Pid() int { return c.cmd.Process.Pid }

// Done is closed once the child has exited and its group has been killed.
func (c *Child) Done() <-chan struct{} { return c.done }

// ExitCode is the child's exit status once Done is closed: its exit code,
// or 128 + the signal that killed it.
func (c *Child) ExitCode() int {
	<-c.done
	return c.code
}

// Signal sends sig to the child's whole process group.
func (c *Child) Signal(sig syscall.Signal) {
	select {
	case <-c.done:
	default:
		_ = syscall.Kill(-c.cmd.Process.Pid, sig)
	}
}

// Terminate sends SIGTERM to the process group and SIGKILL at killAt if
// it is still running then (at once if killAt has passed), and returns
// once the child has exited.
func (c *Child) Terminate(killAt time.Time) {
	c.Signal(syscall.SIGTERM)
	t := time.NewTimer(time.Until(killAt))
	defer t.Stop()
	select {
	case <-c.done:
		return
	case <-t.C:
	}
	c.Signal(syscall.SIGKILL)
	<-c.done
}
