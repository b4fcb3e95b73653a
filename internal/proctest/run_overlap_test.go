package proctest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/faultproxy"
	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// overlapChild holds an exclusive flock for as long as it runs and logs
// its start; a command that finds the lock held logs "overlap" and exits.
// Its sleeps do not inherit the lock's descriptor, so the lock lives
// exactly as long as the command itself. It sleeps in the background and
// waits for the sleep: a trapped SIGTERM ends a wait at once, where the
// shell runs the trap only after a sleep in the foreground has ended (a
// fork and an exec every 20 ms before): on a loaded machine the 350 ms
// between a cut-off run's SIGTERM and its SIGKILL at ttl 1s were seen to
// pass without the trap ("did not exit on SIGTERM", status 137).
const overlapChild = `exec 9>>"$RUN_LOCK"
if ! flock -n 9; then echo "overlap $$ $GO_CLUSTER_EPOCH $GO_CLUSTER_NODE" >> "$RUN_LOG"; exit 99; fi
echo "start $$ $GO_CLUSTER_EPOCH $GO_CLUSTER_NODE" >> "$RUN_LOG"
trap 'echo "end $$" >> "$RUN_LOG"; exit 0' TERM
while :; do sleep 1 9>&- & wait $!; done`

// runStart is a "start" line of the shared log.
type runStart struct {
	pid   int
	epoch int64
	node  string
}

// readStarts parses the shared log: the starts in order, and the overlap
// lines.
func readStarts(t *testing.T, path string) (starts []runStart, overlaps []string) {
	t.Helper()
	for _, line := range strings.Split(readFile(path), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0 || f[0] == "end" && len(f) == 2:
		case f[0] == "overlap":
			overlaps = append(overlaps, line)
		case f[0] == "start" && len(f) == 4:
			pid, _ := strconv.Atoi(f[1])
			epoch, _ := strconv.ParseInt(f[2], 10, 64)
			starts = append(starts, runStart{pid, epoch, f[3]})
		default:
			t.Fatalf("bad log line %q", line)
		}
	}
	return starts, overlaps
}

// TestRunNoOverlap kills the leading run with SIGKILL, or cuts its link to
// NATS, over and over, with another run waiting each time, and checks
// that no two commands ever ran at once: each holds an flock while it
// runs, and a command that finds it held says so. The epochs of the
// commands' starts only go up.
func TestRunNoOverlap(t *testing.T) {
	// Side by side with other tests, at ttl 2s as the root package's
	// tests are: SafetyMargin 200 ms, and 700 ms between a cut-off
	// command's SIGTERM and its SIGKILL, against the stalls of a loaded
	// machine.
	t.Parallel()
	cycles := 20
	if testing.Short() {
		cycles = 6
	}
	natsBin, _ := binaries(t)
	ns := startNATS(t, natsBin)
	dir := t.TempDir()
	logPath := filepath.Join(dir, "runs.log")
	env := []string{"RUN_LOCK=" + filepath.Join(dir, "lock"), "RUN_LOG=" + logPath}
	const ttl = 2 * time.Second

	type member struct {
		p     *runProc
		proxy *faultproxy.Proxy
	}
	members := map[string]*member{}
	next := 0
	add := func() {
		next++
		id := fmt.Sprintf("node-%d", next)
		px := faultproxy.New(t, strings.TrimPrefix(ns.URL(), "nats://"))
		members[id] = &member{startRun(t, px.URL(), "overlap", id, env, []string{"--ttl", ttl.String()}, "sh", "-c", overlapChild), px}
	}
	add()
	add()
	natstest.WaitFor(t, 20*time.Second, func() bool { s, _ := readStarts(t, logPath); return len(s) > 0 }, "no command started")

	for i := range cycles {
		starts, _ := readStarts(t, logPath)
		last := starts[len(starts)-1]
		leader := members[last.node]
		if leader == nil {
			t.Fatalf("cycle %d: the last start is by %s, which is not running", i, last.node)
		}
		if i%2 == 0 {
			leader.p.signal(syscall.SIGKILL)
			leader.p.waitExit(t, 5*time.Second)
			delete(members, last.node)
			add()
		} else {
			leader.proxy.Cut()
		}
		natstest.WaitFor(t, 20*time.Second, func() bool {
			s, o := readStarts(t, logPath)
			return len(o) > 0 || s[len(s)-1].epoch > last.epoch
		}, "cycle %d: no command started after the fault to %s", i, last.node)
		if _, o := readStarts(t, logPath); len(o) > 0 {
			t.Fatalf("cycle %d: commands overlapped: %q", i, o)
		}
		if i%2 == 1 {
			leader.proxy.Restore()
			// Cut off, its run stopped the command with SIGTERM, in time
			// for the command's own exit, before the tenure's deadline.
			if !strings.Contains(readFile(logPath), fmt.Sprintf("end %d\n", last.pid)) {
				t.Fatalf("cycle %d: the command of %+v, cut off, did not exit on SIGTERM", i, last)
			}
		}
		for id, m := range members {
			if !m.p.running() {
				t.Fatalf("cycle %d: run %s exited (%d)", i, id, m.p.code)
			}
		}
	}

	starts, overlaps := readStarts(t, logPath)
	if len(overlaps) > 0 {
		t.Fatalf("commands overlapped: %q", overlaps)
	}
	for i := 1; i < len(starts); i++ {
		if starts[i].epoch <= starts[i-1].epoch {
			t.Fatalf("start %d (%+v) has an epoch not above the one before (%+v)", i, starts[i], starts[i-1])
		}
		if alive(starts[i-1].pid) {
			t.Fatalf("the command of %+v is still running after %+v started", starts[i-1], starts[i])
		}
	}
	if len(starts) < cycles+1 {
		t.Fatalf("%d starts over %d faults, want at least %d", len(starts), cycles, cycles+1)
	}
	t.Logf("%d faults, %d starts, no overlap", cycles, len(starts))
	_ = os.Remove(logPath)
}
