package natstest

import (
	"flag"
	"runtime"
	"strconv"
)

// WaitingParallelism raises go test's -parallel, when the command line does
// not set it, from GOMAXPROCS to perCPU times that: tests against NATS
// spend most of their time waiting for a lease to expire or a message to
// arrive, not on a CPU, and with the default a 2-core machine runs two
// waiting tests at a time and idles. Each package says why its perCPU.
// Call it from TestMain before m.Run.
func WaitingParallelism(perCPU int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if set {
		return
	}
	_ = flag.Set("test.parallel", strconv.Itoa(perCPU*runtime.GOMAXPROCS(0)))
}
