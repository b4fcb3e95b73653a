package proctest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runProc is one `go-cluster run` process.
type runProc struct {
	node   string
	cmd    *exec.Cmd
	stderr string
	exited chan struct{}
	code   int
}

// startRun starts `go-cluster run --verbose` for node against natsURL with
// the run flags extra and the command argv; env is added to the
// environment (the command inherits it). It is killed at cleanup.
func startRun(t *testing.T, natsURL, clusterID, node string, env, extra []string, argv ...string) *runProc {
	t.Helper()
	p := &runProc{node: node, stderr: filepath.Join(t.TempDir(), node+".stderr"), exited: make(chan struct{})}
	args := append([]string{"run", "--server", natsURL, "--cluster", clusterID, "--node", node, "--verbose"}, extra...)
	startProc(t, p, env, append(append(args, "--"), argv...)...)
	return p
}

// startProc starts the go-cluster CLI with args for p, its output in
// p.stderr, env added to the environment; it is killed at cleanup.
func startProc(t *testing.T, p *runProc, env []string, args ...string) {
	t.Helper()
	startArgv(t, p, env, append([]string{goClusterBinary(t)}, args...))
}

// startArgv is startProc for any command line: argv[0] is the program.
func startArgv(t *testing.T, p *runProc, env []string, argv []string) {
	t.Helper()
	errFile, err := os.Create(p.stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer errFile.Close()
	p.cmd = exec.Command(argv[0], argv[1:]...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = errFile, errFile
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		p.code = p.cmd.ProcessState.ExitCode()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.signal(syscall.SIGKILL)
		<-p.exited
		if t.Failed() {
			b, _ := os.ReadFile(p.stderr)
			t.Logf("%s stderr:\n%s", p.node, b)
		}
	})
}

func (p *runProc) signal(sig syscall.Signal) {
	select {
	case <-p.exited:
	default:
		_ = p.cmd.Process.Signal(sig)
	}
}

// waitExit waits for the process to exit and returns its status.
func (p *runProc) waitExit(t *testing.T, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.exited:
		return p.code
	case <-time.After(timeout):
		t.Fatalf("run %s did not exit within %v", p.node, timeout)
		return 0
	}
}

// running reports whether the process is still running.
func (p *runProc) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// logged reports whether the process's stderr contains s.
func (p *runProc) logged(s string) bool {
	b, _ := os.ReadFile(p.stderr)
	return strings.Contains(string(b), s)
}

// readFile returns the file's content, "" if it does not exist.
func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// alive reports whether process pid exists (and is not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	// pid (comm) STATE ...: the state follows the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z'
}
