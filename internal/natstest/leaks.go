package natstest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// leakTimeout is how long CheckLeaks lets goroutines take to wind down
// (a variable so that this package's tests can shorten it).
var leakTimeout = 5 * time.Second

// leakLabel is the profiler label CheckLeaks puts on a test's goroutine;
// every goroutine started from it, and from those, inherits it.
const leakLabel = "natstest.leakcheck"

// leakSeq tells apart the labels of tests with the same name (-count=N).
var leakSeq atomic.Int64

// CheckLeaks registers, through t.Cleanup, a check that no goroutine started
// during the test is still running when the test's cleanups are done. Call it
// FIRST in a test, so that it runs LAST, after the servers, connections and
// proxies registered later have been closed. It retries for up to 5s before
// reporting.
//
// It works beside t.Parallel: it labels the test's goroutine (runtime/pprof
// labels), every goroutine started from it inherits the label, and the check
// looks only at goroutines that carry it, so the goroutines of tests running
// alongside never count. Goroutines that already existed when it was called
// are not labelled and so ignored. A goroutine the runtime starts on no
// test's behalf (a time.AfterFunc callback) carries no label: VerifyMain,
// in the package's TestMain, catches those at the end of the package.
func CheckLeaks(t testing.TB) {
	t.Helper()
	label := fmt.Sprintf("%s#%d", t.Name(), leakSeq.Add(1))
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels(leakLabel, label)))
	t.Cleanup(func() {
		var leaked string
		if poll(leakTimeout, func() bool {
			leaked = labelledGoroutines(label)
			return leaked == ""
		}) {
			return
		}
		t.Errorf("natstest: goroutines leaked:\n%s", leaked)
	})
}

// labelledGoroutines returns the stacks, as the goroutine profile prints
// them (debug=1), of the goroutines labelled label, leaving out the one
// asking and the test runner's own.
func labelledGoroutines(label string) string {
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 1); err != nil {
		return "natstest: goroutine profile: " + err.Error()
	}
	want := fmt.Sprintf("# labels: {%q:%q}", leakLabel, label)
	var out strings.Builder
	// Records are separated by a blank line: "N @ pcs", "# labels: ...",
	// then one "#\tpc\tfunc\tfile:line" line per frame.
	for rec := range strings.SplitSeq(buf.String(), "\n\n") {
		// A goroutine not yet scheduled has no frames: its labels line
		// ends the record.
		if !slices.Contains(strings.Split(rec, "\n"), want) || ownGoroutine(rec) || sharedGoroutine(rec) {
			continue
		}
		out.WriteString(rec)
		out.WriteString("\n\n")
	}
	return out.String()
}

// ownGoroutine reports whether a profile record is the test's goroutine
// itself (running the check, or a parent waiting for its subtests) rather
// than one the test started.
func ownGoroutine(rec string) bool {
	return strings.Contains(rec, "runtime/pprof.writeGoroutine") ||
		strings.Contains(rec, "\ttesting.tRunner+") ||
		strings.Contains(rec, "\ttesting.(*T).Run+")
}

// sharedGoroutines are goroutines the process shares between servers: one
// test starts them, and they run on while any server runs, whichever test
// started it. Not a leak of the test that happened to start them; VerifyMain
// still fails the package if one outlives every server.
var sharedGoroutines = []string{
	// nats-server's access-time clock: one per process, counted by its
	// file stores, ends when the last one is closed.
	"\tgithub.com/nats-io/nats-server/v2/server/ats.Register.func1+",
	// os/signal's loop: started by the process's first signal.Notify
	// (go test -fuzz's coordinator calls it while a fuzz target runs), it
	// runs for the life of the process.
	"\tos/signal.loop+",
}

// sharedGoroutine reports whether a profile record is one of sharedGoroutines.
func sharedGoroutine(rec string) bool {
	for _, fn := range sharedGoroutines {
		if strings.Contains(rec, fn) {
			return true
		}
	}
	return false
}

// VerifyMain runs the package's tests and then fails the run if any
// goroutine is still running, whoever started it: the backstop for the
// goroutines CheckLeaks cannot attribute to a test. cleanups run after the
// tests, before the process exits (it does not return). Call it from
// TestMain:
//
//	func TestMain(m *testing.M) { natstest.VerifyMain(m) }
func VerifyMain(m *testing.M, cleanups ...func()) {
	opts := append([]goleak.Option{goleak.Cleanup(func(code int) {
		for _, c := range cleanups {
			c()
		}
		os.Exit(code)
	})}, ignoredGoroutines...)
	goleak.VerifyTestMain(m, opts...)
}

// ignoredGoroutines are the goroutines that legitimately outlive an embedded
// server's Shutdown. There are none: measured with nats-server v2.15.2 and
// nats.go v1.55.0, a standalone server and a 3-member cluster (including
// members shut down and restarted, and clients closed first) leave no
// goroutine behind once Shutdown/WaitForShutdown return. Add an entry here,
// with goleak.IgnoreTopFunction and a comment saying why, only if a new
// version of either proves otherwise.
var ignoredGoroutines []goleak.Option
