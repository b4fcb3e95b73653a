package proctest

import (
	"fmt"
	"hash/fnv"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"
)

// givenPorts are the ports freePort has handed out in this test process.
// Tests run side by side: a port one test found free and closed, for its
// server to take moments later, must not be found free by another in
// between. Shared by every test, as the machine's ports are.
var givenPorts = struct {
	sync.Mutex
	m map[int]bool
}{m: map[int]bool{}}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago and
// that no other test of this process was given.
func freePort(t *testing.T) int {
	t.Helper()
	givenPorts.Lock()
	defer givenPorts.Unlock()
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		if !givenPorts.m[port] {
			givenPorts.m[port] = true
			return port
		}
	}
}

// clusterSeq numbers the clusters the tests make, for names of their own.
var clusterSeq atomic.Int64

// netnsName is the name of a network namespace of test t: prefix, this
// process's ID, a hash of the test's name (tests side by side each have
// their own) and id.
func netnsName(t *testing.T, prefix, id string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(t.Name()))
	name := fmt.Sprintf("%s-%d-%08x", prefix, os.Getpid(), h.Sum32())
	if id != "" {
		name += "-" + id
	}
	return name
}
