package agent

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// probe runs check c once, within ctx (which carries its timeout); nil
// means it passed.
func probe(ctx context.Context, c *Check) error {
	switch {
	case c.Exec != nil:
		return probeExec(ctx, c.Exec)
	case c.HTTP != nil:
		return probeHTTP(ctx, c.HTTP)
	case c.TCP != nil:
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", c.TCP.Address)
		if err != nil {
			return err
		}
		return conn.Close()
	case c.Interface != nil:
		return probeInterface(c.Interface.Name)
	case c.File != nil:
		_, err := os.Stat(c.File.Path)
		present := err == nil
		if want := c.File.Present == nil || *c.File.Present; present != want {
			return fmt.Errorf("%s: present %v, want %v", c.File.Path, present, want)
		}
		return nil
	}
	return errors.New("a check of no kind")
}

// shellPath runs an exec check's shell command line.
const shellPath = "/bin/sh"

// probeExec runs the command in a process group of its own; at ctx's end
// the whole group is killed.
func probeExec(ctx context.Context, e *ExecCheck) error {
	argv := e.Argv
	if e.Shell != "" {
		argv = []string{shellPath, "-c", e.Shell}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // what it left behind
		return err
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return fmt.Errorf("timed out: %w", ctx.Err())
	}
}

func probeHTTP(ctx context.Context, h *HTTPCheck) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.URL, nil)
	if err != nil {
		return err
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: h.InsecureSkipVerify}, DisableKeepAlives: true} //nolint:gosec // the operator's choice
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: time.Minute}).Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	want := h.Status
	if want == 0 {
		want = DefaultHTTPStatus
	}
	if resp.StatusCode != want {
		return fmt.Errorf("status %d, want %d", resp.StatusCode, want)
	}
	return nil
}

func probeInterface(name string) error {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return err
	}
	if ifi.Flags&net.FlagUp == 0 || ifi.Flags&net.FlagRunning == 0 {
		return fmt.Errorf("interface %s is not up and running (%v)", name, ifi.Flags)
	}
	return nil
}
