package proctest

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/ozanturksever/go-cluster/internal/proof/arplab"
)

// labRuns is how many times TestAgentLabCounts applies each fault: 5 in
// CI, 20 for issue 33's figures (-lab.n=20).
var labRuns = flag.Int("lab.n", 5, "TestAgentLabCounts: runs per fault (issue 33's figures: 20)")

// labFault is one way TestAgentLabCounts takes the leader a out: apply
// it, then undo it once b has taken over. apply returns when the fault
// began if it knows better than the moment it was called (zero: then).
type labFault struct {
	name  string
	apply func(l *agentLab) time.Time
	undo  func(l *agentLab)
}

// labFaults are issue 33's: a cut-off from NATS, a SIGTERM, a failing
// check; and issue 41's link down.
var labFaults = []labFault{
	{"NATSCutOff",
		func(l *agentLab) time.Time { l.cutNATS(l.a(), true); return time.Time{} },
		func(l *agentLab) { l.cutNATS(l.a(), false) }},
	{"SIGTERM",
		func(l *agentLab) time.Time { l.agents[l.a()].signal(syscall.SIGTERM); return time.Time{} },
		func(l *agentLab) {
			a := l.agents[l.a()]
			if code := a.waitExit(l.t, 20*time.Second); code != 0 {
				l.t.Fatalf("a's agent exited %d after SIGTERM", code)
			}
			l.startAgent(l.a(), a.cmd.Args[len(a.cmd.Args)-1])
		}},
	// Issue 41's: a's LAN link down (ip link set eth0 down), up again. The
	// fault begins at the netlink request, made from this process: the
	// figure counts from the link going down, not from the start of an ip
	// command, whose exec alone can take tens of milliseconds on a busy
	// machine.
	{"LinkDown",
		func(l *agentLab) time.Time { return l.setLink(l.a(), false) },
		func(l *agentLab) { l.setLink(l.a(), true) }},
	{"CheckFails",
		func(l *agentLab) time.Time {
			if err := os.WriteFile(l.failFile(l.a()), nil, 0o600); err != nil {
				l.t.Fatal(err)
			}
			return time.Time{}
		},
		func(l *agentLab) {
			if err := os.Remove(l.failFile(l.a())); err != nil {
				l.t.Fatal(err)
			}
		}},
}

// labRun is what the client saw in one run: b's takeover, the gap
// between a's last answer and b's first, and the whole run's answers
// (the fault, the takeover, a back as the follower and a's taking the VIP
// back with preempt).
type labRun struct {
	takeover time.Duration // the fault -> b's first gratuitous ARP
	gap      time.Duration // a's last answer -> b's first answer
	split    arplab.SplitBrain
	slowLog  []string // a takeover past labTakeoverGoal: both agents' log lines around it
}

// labTakeoverGoal is issue 41's for a downed link: b's first gratuitous
// ARP within 100 ms of the fault. A run past it keeps the agents' log
// lines of its takeover, so that the figure can be explained.
const labTakeoverGoal = 100 * time.Millisecond

// TestAgentLabCounts applies each of issue 33's faults (and issue 41's) -lab.n times to
// the leader a (priority 100) of a steady pair and undoes it; b takes
// over and a takes the VIP back. No probe of the client may ever be
// answered by both hosts. It logs the takeovers and the handover gaps
// the client saw (BENCHMARKS.md, issue 33).
//
// Each fault has a lab of its own, and the faults run side by side with
// each other and with TestAgentLab: each mostly waits. For figures, run
// them one at a time (-parallel 1), as BENCHMARKS.md's were.
func TestAgentLabCounts(t *testing.T) {
	t.Parallel()
	for i, f := range labFaults {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			l := newAgentLab(t, fmt.Sprintf("gccnt%d-", i))
			l.startPair("labcount" + f.name)
			var runs []labRun
			for i := range *labRuns {
				r := l.faultRun(f)
				t.Logf("run %d: b's first GARP %v after the fault, the client's gap %v; %d probes, %d unanswered, answered by both %d, answerers %d; the client read an answer up to %v after it came; %d answer(s) over 20 ms after the probe (up to %v)",
					i+1, r.takeover.Round(time.Millisecond), r.gap.Round(100*time.Microsecond), r.split.Probes, r.split.Unanswered, r.split.Both, len(r.split.Answerers),
					r.split.ReadLate.Round(100*time.Microsecond), r.split.Late, r.split.LateMax.Round(100*time.Microsecond))
				// a, b, then a again (its hand-back) is the run's course;
				// more turns would be a flap.
				for _, line := range r.slowLog {
					t.Logf("run %d, past %v: %s", i+1, labTakeoverGoal, line)
				}
				if r.split.Both > 0 || len(r.split.Answerers) > 3 {
					t.Errorf("run %d: the client got answers from both hosts: %+v (the first: %v)", i+1, r.split, r.split.FirstBoth)
				}
				runs = append(runs, r)
			}
			logLabRuns(t, f.name, runs)
		})
	}
}

// faultRun is one run of f from a steady pair with a leading back to one.
func (l *agentLab) faultRun(f labFault) labRun {
	l.t.Helper()
	a, b := l.a(), l.b()
	l.waitSteady(a, 30*time.Second)
	since := time.Now()
	// A node that handed over (b, to a's preempt) stays out of elections
	// for one lease_ttl (the library's cooldown): let it pass, as in an
	// operator's day, and spread the faults over the renewal cycle.
	time.Sleep(time.Until(l.handBack.Add(labTTL)) + rand.N(labRenew))
	t0 := time.Now()
	if at := f.apply(l); !at.IsZero() {
		t0 = at
	}
	took, ok := l.waitGARP(b, t0, 5*labTTL)
	if !ok {
		l.t.Fatalf("%s: no gratuitous ARP from b within %v", f.name, 5*labTTL)
	}
	var first time.Time
	within(5*time.Second, func() bool {
		at, ok, _ := l.watch.FirstAnswer(b.MAC, t0)
		first = at
		return ok
	})
	if first.IsZero() {
		l.t.Fatalf("%s: b never answered the client", f.name)
	}
	gap := l.watch.SplitBrain(since, first.Add(time.Nanosecond)).Silent
	var slowLog []string
	if took > labTakeoverGoal {
		for _, h := range []*arplab.Host{a, b} {
			slowLog = append(slowLog, logWindow(l.t, l.agents[h].stderr, h.ID, t0.Add(-labRenew), t0.Add(took+50*time.Millisecond))...)
		}
	}
	undone := time.Now()
	f.undo(l)
	l.waitSteady(a, 30*time.Second)
	if at, ok, _ := l.watch.FirstGARP(a.MAC, undone); ok {
		l.handBack = at
	}
	end := time.Now()
	split := l.watch.SplitBrain(since, end)
	l.watch.Forget(end)
	return labRun{takeover: took, gap: gap, split: split, slowLog: slowLog}
}

// logWindow is the lines of an agent's log (slog's text, time= first)
// whose time is within [from, to], each named by host.
func logWindow(t *testing.T, file, host string, from, to time.Time) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		stamp, _, _ := strings.Cut(strings.TrimPrefix(line, "time="), " ")
		at, err := time.Parse(time.RFC3339Nano, stamp)
		if err == nil && !at.Before(from) && !at.After(to) {
			out = append(out, host+": "+line)
		}
	}
	return out
}

// logLabRuns logs a fault's figures: takeovers and gaps (median, p99,
// max), probes, unanswered probes and probes answered by both.
func logLabRuns(t *testing.T, name string, runs []labRun) {
	var takeovers, gaps []time.Duration
	probes, unanswered, both := 0, 0, 0
	for _, r := range runs {
		takeovers, gaps = append(takeovers, r.takeover), append(gaps, r.gap)
		probes += r.split.Probes
		unanswered += r.split.Unanswered
		both += r.split.Both
	}
	q := func(ds []time.Duration) (median, p99, maxd time.Duration) {
		s := slices.Clone(ds)
		slices.Sort(s)
		if len(s) == 0 {
			return 0, 0, 0
		}
		return s[len(s)/2], s[min(len(s)-1, len(s)*99/100)], s[len(s)-1]
	}
	tm, tp, tx := q(takeovers)
	gm, gp, gx := q(gaps)
	t.Logf("RESULT %s x %d: fault -> b's first GARP median %v p99 %v max %v; client's gap (a's last answer -> b's first) median %v p99 %v max %v; %d probes, %d unanswered, %d answered by both hosts",
		name, len(runs), tm.Round(time.Millisecond), tp.Round(time.Millisecond), tx.Round(time.Millisecond),
		gm.Round(100*time.Microsecond), gp.Round(100*time.Microsecond), gx.Round(100*time.Microsecond), probes, unanswered, both)
}

// setLink sets h's LAN link down or up with one netlink request from this
// process, and returns when the request was made.
func (l *agentLab) setLink(h *arplab.Host, up bool) time.Time {
	l.t.Helper()
	ns, err := netns.GetFromName(h.NS)
	if err != nil {
		l.t.Fatal(err)
	}
	defer ns.Close()
	nh, err := netlink.NewHandleAt(ns)
	if err != nil {
		l.t.Fatal(err)
	}
	defer nh.Close()
	link, err := nh.LinkByName(arplab.IfName)
	if err != nil {
		l.t.Fatal(err)
	}
	at := time.Now()
	if up {
		err = nh.LinkSetUp(link)
	} else {
		err = nh.LinkSetDown(link)
	}
	if err != nil {
		l.t.Fatalf("link %s of %s up=%v: %v", arplab.IfName, h.NS, up, err)
	}
	return at
}
