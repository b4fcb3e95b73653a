package runner

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
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
	cmd    *exec.Cmd
	exited chan struct{} // closed once the command itself has been reaped
	done   chan struct{} // closed once Terminate has left no process of the group
	code   int
	stop   sync.Once
}

// StartChild starts argv with env (added to this process's environment).
// The child leads a new process group, so that signals reach whatever it
// starts too, and gets SIGKILL if this process dies (Pdeathsig). Whoever
// starts it must call Terminate once, when it has exited or must stop:
// that ends what is left of its group.
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
	c := &Child{cmd: cmd, exited: make(chan struct{}), done: make(chan struct{})}
	go c.wait()
	return c, nil
}

// wait reaps the command.
func (c *Child) wait() {
	_ = c.cmd.Wait() // the status is in ProcessState
	c.code = exitStatus(c.cmd.ProcessState)
	close(c.exited)
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

// Exited is closed once the command itself has exited; processes it
// started may still run until Terminate.
func (c *Child) Exited() <-chan struct{} { return c.exited }

// ExitCode is the command's exit status once Exited is closed: its exit
// code, or 128 + the signal that killed it.
func (c *Child) ExitCode() int {
	<-c.exited
	return c.code
}

// Signal sends sig to the child's whole process group, until Terminate
// has ended it.
func (c *Child) Signal(sig syscall.Signal) {
	select {
	case <-c.done:
	default:
		_ = syscall.Kill(-c.cmd.Process.Pid, sig)
	}
}

// groupPoll is how often Terminate looks whether the group is gone: the
// kernel tells of a group's end only by polling.
const groupPoll = 10 * time.Millisecond

// Terminate sends SIGTERM to the process group (the command, or what it
// left running when it exited) and SIGKILL at killAt if any of it still
// runs then (at once if killAt has passed). It returns once the command
// has exited and no process of its group is left. Later calls wait for
// the first.
func (c *Child) Terminate(killAt time.Time) {
	c.stop.Do(func() {
		defer close(c.done)
		pgid := c.cmd.Process.Pid
		if c.gone(pgid) {
			return
		}
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		kill := time.NewTimer(time.Until(killAt))
		defer kill.Stop()
		if c.waitGone(pgid, kill.C) {
			return
		}
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		c.waitGone(pgid, nil)
	})
	<-c.done
}

// waitGone waits until the command has exited and its group is gone, and
// reports true; or until stop fires, and reports false.
func (c *Child) waitGone(pgid int, stop <-chan time.Time) bool {
	tick := time.NewTicker(groupPoll)
	defer tick.Stop()
	exited := c.exited
	for !c.gone(pgid) {
		select {
		case <-stop:
			return false
		case <-tick.C:
		case <-exited:
			exited = nil // from now on, only the ticks: the group may outlive it
		}
	}
	return true
}

// gone reports whether the command has exited and no process of its
// group is left.
func (c *Child) gone(pgid int) bool {
	select {
	case <-c.exited:
		return !groupAlive(pgid)
	default:
		return false
	}
}
