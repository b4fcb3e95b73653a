package natstest

import (
	"flag"
	"runtime"
	"strconv"
)

// waitingTestsPerCPU is how many parallel tests WaitingParallelism lets run
// per CPU: tests against NATS spend most of their time waiting for a lease
// to expire or a message to arrive, not on a CPU.
const waitingTestsPerCPU = 2

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
