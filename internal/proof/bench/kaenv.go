package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/freeport"
)

// runOut runs a command and returns its combined output.
func runOut(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, lastLines(out, 5))
	}
	return string(out), nil
}

// moduleRoot is the directory of the module's go.mod, found with the go
// command.
func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	gomod := strings.TrimSpace(string(out))
	if err != nil || gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("run from the module's source tree with the go command installed (go env GOMOD: %v)", err)
	}
	return filepath.Dir(gomod), nil
}

// buildBinaries builds go-cluster and the module's nats-server into dir.
func buildBinaries(ctx context.Context, dir string) (goCluster, natsServer string, err error) {
	root, err := moduleRoot(ctx)
	if err != nil {
		return "", "", err
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", dir+"/", "./cmd/go-cluster", "github.com/nats-io/nats-server/v2")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("go build: %v: %s", err, lastLines(out, 5))
	}
	return filepath.Join(dir, "go-cluster"), filepath.Join(dir, "nats-server"), nil
}

// natsProc is a nats-server process with JetStream on 127.0.0.1.
type natsProc struct {
	url string
	*haProc
}

// startNATSProc runs bin with a config and a store in dir and waits until
// JetStream answers.
func startNATSProc(ctx context.Context, bin, dir string) (*natsProc, error) {
	ports, err := freeport.Reserve(1)
	if err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "nats.conf")
	text := fmt.Sprintf("listen: \"127.0.0.1:%d\"\nserver_name: bench-ka\njetstream {\n  store_dir: %q\n  sync_interval: always\n}\n",
		ports[0], filepath.Join(dir, "js"))
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		return nil, err
	}
	p, err := startHAProc([]string{bin, "-c", conf}, filepath.Join(dir, "nats.log"))
	if err != nil {
		return nil, err
	}
	n := &natsProc{url: fmt.Sprintf("nats://127.0.0.1:%d", ports[0]), haProc: p}
	if err := waitUntil(ctx, 30*time.Second, 20*time.Millisecond, "nats-server answering JetStream", n.ready); err != nil {
		p.kill()
		return nil, err
	}
	return n, nil
}

// ready reports whether a client can use JetStream.
func (n *natsProc) ready() (bool, error) {
	if !n.running() {
		return false, fmt.Errorf("nats-server exited; see %s", n.log)
	}
	nc, err := nats.Connect(n.url, nats.Timeout(time.Second), nats.NoReconnect())
	if err != nil {
		return false, nil // not listening yet
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return false, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err = js.AccountInfo(ctx)
	return err == nil, nil
}

// stop ends the server gracefully, then for sure.
func (n *natsProc) stop() {
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	if n.waitExit(5*time.Second) != nil {
		n.kill()
	}
}

// waitUntil polls cond every poll until it holds, it fails, ctx ends or
// timeout passes.
func waitUntil(ctx context.Context, timeout, poll time.Duration, what string, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no %s within %v", what, timeout)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-time.After(poll):
		}
	}
}
