package proctest

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/faultproxy"
	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// slotChild is overlapChild with one lock per slot: it holds the flock of
// its slot while it runs, and logs its start with the slot.
const slotChild = `exec 9>>"$RUN_LOCK.$GO_CLUSTER_SLOT"
if ! flock -n 9; then echo "overlap $$ $GO_CLUSTER_EPOCH $GO_CLUSTER_NODE $GO_CLUSTER_SLOT" >> "$RUN_LOG"; exit 99; fi
echo "start $$ $GO_CLUSTER_EPOCH $GO_CLUSTER_NODE $GO_CLUSTER_SLOT" >> "$RUN_LOG"
trap 'echo "end $$" >> "$RUN_LOG"; exit 0' TERM
while :; do sleep 1 9>&- & wait $!; done`

// slotStart is a "start" line of the shared log.
type slotStart struct {
	runStart
	slot int
}

// readSlotStarts parses the shared log: the starts in order, and the
// overlap lines.
func readSlotStarts(t *testing.T, path string) (starts []slotStart, overlaps []string) {
	t.Helper()
	for _, line := range strings.Split(readFile(path), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0 || f[0] == "end" && len(f) == 2:
		case f[0] == "overlap":
			overlaps = append(overlaps, line)
		case f[0] == "start" && len(f) == 5:
			pid, _ := strconv.Atoi(f[1])
			epoch, _ := strconv.ParseInt(f[2], 10, 64)
			slot, _ := strconv.Atoi(f[4])
			starts = append(starts, slotStart{runStart{pid, epoch, f[3]}, slot})
		default:
			t.Fatalf("bad log line %q", line)
		}
	}
	return starts, overlaps
}

// lastInSlot is the latest start in slot, and whether there is one.
func lastInSlot(starts []slotStart, slot int) (slotStart, bool) {
	for i := len(starts) - 1; i >= 0; i-- {
		if starts[i].slot == slot {
			return starts[i], true
		}
	}
	return slotStart{}, false
}

// TestRunSlotsNoOverlap is TestRunNoOverlap per slot: three runs with
// --slots 2, so that two commands run at once and one run waits; the
// command of either slot's holder is killed with its run (SIGKILL) or cut
// off from NATS, in turn, and no two commands of one slot ever ran at
// once. Each slot's epochs only go up, and every start is in slot 1 or 2.
func TestRunSlotsNoOverlap(t *testing.T) {
	t.Parallel() // at ttl 2s, as TestRunNoOverlap
	cycles := 12
	if testing.Short() {
		cycles = 4
	}
	natsBin, _ := binaries(t)
	ns := startNATS(t, natsBin)
	dir := t.TempDir()
	logPath := filepath.Join(dir, "runs.log")
	env := []string{"RUN_LOCK=" + filepath.Join(dir, "lock"), "RUN_LOG=" + logPath}

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
		members[id] = &member{startRun(t, px.URL(), "slots", id, env, []string{"--ttl", "2s", "--slots", "2"}, "sh", "-c", slotChild), px}
	}
	for range 3 {
		add()
	}
	natstest.WaitFor(t, 20*time.Second, func() bool {
		s, _ := readSlotStarts(t, logPath)
		one, ok1 := lastInSlot(s, 1)
		two, ok2 := lastInSlot(s, 2)
		return ok1 && ok2 && one.node != two.node && alive(one.pid) && alive(two.pid)
	}, "two commands did not run at once, one per slot")

	for i := range cycles {
		slot := i%2 + 1
		starts, _ := readSlotStarts(t, logPath)
		last, _ := lastInSlot(starts, slot)
		leader := members[last.node]
		if leader == nil {
			t.Fatalf("cycle %d: the last start of slot %d is by %s, which is not running", i, slot, last.node)
		}
		kill := i/2%2 == 0
		if kill {
			leader.p.signal(syscall.SIGKILL)
			leader.p.waitExit(t, 5*time.Second)
			delete(members, last.node)
			add()
		} else {
			leader.proxy.Cut()
		}
		natstest.WaitFor(t, 20*time.Second, func() bool {
			s, o := readSlotStarts(t, logPath)
			now, _ := lastInSlot(s, slot)
			return len(o) > 0 || now.epoch > last.epoch
		}, "cycle %d: no command started in slot %d after the fault to %s", i, slot, last.node)
		if _, o := readSlotStarts(t, logPath); len(o) > 0 {
			t.Fatalf("cycle %d: commands overlapped: %q", i, o)
		}
		if !kill {
			leader.proxy.Restore()
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

	starts, overlaps := readSlotStarts(t, logPath)
	if len(overlaps) > 0 {
		t.Fatalf("commands overlapped: %q", overlaps)
	}
	prev := map[int]slotStart{}
	for i, s := range starts {
		if s.slot != 1 && s.slot != 2 {
			t.Fatalf("start %d (%+v) is in slot %d: only 1 and 2 exist", i, s, s.slot)
		}
		if p, ok := prev[s.slot]; ok {
			if s.epoch <= p.epoch {
				t.Fatalf("start %d (%+v) has an epoch not above the one before in its slot (%+v)", i, s, p)
			}
			if alive(p.pid) {
				t.Fatalf("the command of %+v still runs after %+v started in its slot", p, s)
			}
		}
		prev[s.slot] = s
	}
	t.Logf("%d faults, %d starts, no overlap in either slot", cycles, len(starts))
}
