package main

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// On a terminal, state get ends the value's line; run in-process, the
// observer it starts leaves no goroutine behind.
func TestStateGetOnTerminal(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	pty, tty := openPTY(t)
	defer pty.Close()
	shown := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(pty) // ends with EIO once the tty is closed
		shown <- string(b)
	}()

	srv := natstest.RunServer(t)
	m := startMember(t, srv, "tty", "t1")
	natstest.WaitFor(t, 15*time.Second, m.node.IsLeader, "t1 did not lead")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := m.node.State().Put(ctx, "greeting", []byte("hello")); err != nil {
		t.Fatal(err)
	}
	env := getenvOf(map[string]string{"XDG_CONFIG_HOME": t.TempDir()})
	args := []string{"-s", srv.URL(), "--cluster", "tty", "state", "get", "greeting"}
	var stderr bytes.Buffer
	code := run(ctx, args, tty, &stderr, env)
	tty.Close()
	if got := <-shown; code != exitOK || got != "hello\r\n" { // the terminal turns \n into \r\n
		t.Errorf("exit %d, the terminal shows %q, stderr %q; want hello and a new line", code, got, stderr.String())
	}
	var out bytes.Buffer
	if code := run(ctx, args, &out, &stderr, env); code != exitOK || out.String() != "hello" {
		t.Errorf("exit %d, stdout %q, stderr %q; want hello alone", code, out.String(), stderr.String())
	}
}
