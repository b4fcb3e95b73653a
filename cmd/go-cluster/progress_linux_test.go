package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// openPTY opens a pseudo-terminal: what the program writes to tty, the
// test reads from pty.
func openPTY(t *testing.T) (pty, tty *os.File) {
	t.Helper()
	pty, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	fd := int(pty.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		pty.Close()
		t.Skipf("unlock the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		pty.Close()
		t.Skipf("pseudo-terminal number: %v", err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		pty.Close()
		t.Skipf("open the pseudo-terminal: %v", err)
	}
	return pty, tty
}

// On a terminal, a command that waits shows a spinner on stderr and
// erases it before the output; in a pipe it writes nothing there (the
// CLI tests check that on the built binary).
func TestProgressOnTerminal(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	pty, tty := openPTY(t)
	defer pty.Close()
	if !isTerminal(tty) || isTerminal(&bytes.Buffer{}) {
		t.Fatal("isTerminal does not tell a terminal from a buffer")
	}
	shown := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(pty) // ends with EIO once the tty is closed
		shown <- string(b)
	}()

	srv := natstest.RunServer(t)
	startMember(t, srv, "tty", "t1")
	natstest.WaitFor(t, 15*time.Second, func() bool {
		var out bytes.Buffer
		return run(context.Background(), []string{"-s", srv.URL(), "--cluster", "tty", "status"}, &out, io.Discard,
			getenvOf(map[string]string{"XDG_CONFIG_HOME": t.TempDir()})) == exitOK
	}, "t1 did not lead")

	// The settle time keeps status waiting long enough for frames to show.
	var out bytes.Buffer
	code := run(context.Background(), []string{"-s", srv.URL(), "--cluster", "tty", "status", "--settle", "1s", "--timeout", "20s"},
		&out, tty, getenvOf(map[string]string{"XDG_CONFIG_HOME": t.TempDir()}))
	tty.Close()
	got := <-shown
	if code != exitOK || !strings.Contains(out.String(), "t1") {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	if !strings.Contains(got, "waiting for the members' replies on cluster.tty.status") || !strings.HasSuffix(got, clearLine) {
		t.Errorf("the terminal shows %q: want the spinner, erased at the end", got)
	}
	if strings.ContainsAny(out.String(), "\r\033") {
		t.Errorf("the spinner reached stdout: %q", out.String())
	}
}
