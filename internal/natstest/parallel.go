package natstest

import (
	"flag"
	"runtime"
	"strconv"
)

// waitingTestsPerCPU is how many parallel tests WaitingParallelism lets run
// per CPU: tests against NATS spend most of their time waiting for a lease
// to expire or a message to arrive, not on a CPU. The root package's tests,
// run one at a time under -race, used 88 s of CPU in 720 s (0.12 of a core
// each on average): 4 per CPU keep about half the machine busy. More at
// once would make the CPU, not the waits, the limit, and stall leases.
const waitingTestsPerCPU = 4

// WaitingParallelism raises go test's -parallel, when the command line does
// not set it, from GOMAXPROCS to waitingTestsPerCPU times that: with the
// default, a 2-core machine runs two waiting tests at a time and idles.
// Call it from TestMain before m.Run.
func WaitingParallelism() {
	if !flag.Parsed() {
		flag.Parse()
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if set {
		return
	}
	_ = flag.Set("test.parallel", strconv.Itoa(waitingTestsPerCPU*runtime.GOMAXPROCS(0)))
}
