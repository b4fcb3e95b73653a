package proctest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// natsProc is a standalone nats-server process with JetStream, on
// 127.0.0.1, restartable on the same port and store directory.
type natsProc struct {
	netns  string // the network namespace it runs in (ip netns); "" for this one
	bin    string
	dir    string
	conf   string
	port   int
	cmd    *exec.Cmd
	exited chan struct{}
}

// startNATS writes a config (JetStream with sync_interval: always, as the
// README recommends) and starts the server.
func startNATS(t *testing.T, bin string) *natsProc {
	t.Helper()
	p := newNATSProc(t, bin, "proctest", freePort(t), "")
	p.start(t)
	return p
}

// startNATSCluster starts size servers routed into one JetStream cluster
// and waits until each answers JetStream requests (a meta leader is
// elected). They start together: none is ready without a quorum.
func startNATSCluster(t *testing.T, bin string, size int) []*natsProc {
	t.Helper()
	clientPorts, routes := make([]int, size), make([]string, size)
	routePorts := make([]int, size)
	for i := range size {
		clientPorts[i], routePorts[i] = freePort(t), freePort(t)
		routes[i] = fmt.Sprintf("%q", fmt.Sprintf("nats-route://127.0.0.1:%d", routePorts[i]))
	}
	procs := make([]*natsProc, size)
	for i := range size {
		block := fmt.Sprintf("cluster {\n  name: proctest\n  listen: \"127.0.0.1:%d\"\n  routes: [%s]\n}\n",
			routePorts[i], strings.Join(routes, ", "))
		procs[i] = newNATSProc(t, bin, fmt.Sprintf("proctest-%d", i+1), clientPorts[i], block)
		procs[i].launch(t)
	}
	for _, p := range procs {
		if err := p.waitReady(30 * time.Second); err != nil {
			t.Fatalf("nats-server %s not ready: %v", p.dir, err)
		}
	}
	return procs
}

// newNATSProc writes the config of one server (with extra appended) and
// arranges for it to be killed at cleanup; it does not start it.
func newNATSProc(t *testing.T, bin, name string, port int, extra string) *natsProc {
	t.Helper()
	return newNATSProcIn(t, "", bin, name, port, extra)
}

// newNATSProcIn is newNATSProc for a server in the network namespace
// netns (ip netns; "" for this one), where it listens on every address.
func newNATSProcIn(t *testing.T, netns, bin, name string, port int, extra string) *natsProc {
	t.Helper()
	dir := t.TempDir()
	conf := filepath.Join(dir, "nats.conf")
	host := "127.0.0.1"
	if netns != "" {
		host = "0.0.0.0"
	}
	text := fmt.Sprintf("listen: \"%s:%d\"\nserver_name: %s\njetstream {\n  store_dir: %q\n  sync_interval: always\n}\n%s",
		host, port, name, filepath.Join(dir, "js"), extra)
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &natsProc{netns: netns, bin: bin, dir: dir, conf: conf, port: port}
	t.Cleanup(func() { p.stop(syscall.SIGKILL) })
	return p
}

// URL is the client URL (in the server's namespace).
func (p *natsProc) URL() string { return fmt.Sprintf("nats://127.0.0.1:%d", p.port) }

// start runs the server and waits until JetStream answers.
func (p *natsProc) start(t *testing.T) {
	t.Helper()
	p.launch(t)
	if err := p.waitReady(20 * time.Second); err != nil {
		t.Fatalf("nats-server not ready: %v", err)
	}
}

// launch runs the server.
func (p *natsProc) launch(t *testing.T) {
	t.Helper()
	log, err := os.OpenFile(filepath.Join(p.dir, "nats.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	argv := []string{p.bin, "-c", p.conf}
	if p.netns != "" {
		argv = append([]string{"ip", "netns", "exec", p.netns}, argv...) // ip execs the server: same PID
	}
	p.cmd = exec.Command(argv[0], argv[1:]...)
	p.cmd.Stdout, p.cmd.Stderr = log, log
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start nats-server: %v", err)
	}
	p.exited = make(chan struct{})
	go func(cmd *exec.Cmd, exited chan struct{}) { _ = cmd.Wait(); close(exited) }(p.cmd, p.exited)
}

// waitReady waits until a client can use JetStream.
func (p *natsProc) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		last = func() error {
			opts := []nats.Option{nats.Timeout(time.Second), nats.NoReconnect()}
			if p.netns != "" {
				opts = append(opts, nats.SetCustomDialer(netnsDialer(p.netns)))
			}
			nc, err := nats.Connect(p.URL(), opts...)
			if err != nil {
				return err
			}
			defer nc.Close()
			js, err := jetstream.New(nc)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_, err = js.AccountInfo(ctx)
			return err
		}()
		if last == nil {
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("nats-server exited; see %s", filepath.Join(p.dir, "nats.log"))
		case <-time.After(20 * time.Millisecond):
		}
	}
	return last
}

// running reports whether the server was started and has not exited.
func (p *natsProc) running() bool {
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// stop sends sig and waits for the process to exit.
func (p *natsProc) stop(sig syscall.Signal) {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.exited:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}
