package proctest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// TestAgentWatchdogFitsTheLease (issue 33, defect 7): a hung agent must be
// killed, and its VIPs removed by ExecStopPost=, before its lease can pass
// on: lease_ttl - renew_interval after it hung at the earliest. The
// shipped unit's WatchdogSec= fits the default lease (10s, renewed every
// 3s: at most half of 7s) with SIGKILL as the watchdog's signal, and the
// agent lowers the interval (WATCHDOG_USEC=) to half of lease_ttl -
// renew_interval of a shorter lease, pinging at half of that.
func TestAgentWatchdogFitsTheLease(t *testing.T) {
	t.Parallel()
	sec := unitLines(t, "WatchdogSec")
	if len(sec) != 1 {
		t.Fatalf("WatchdogSec= lines %q, want one", sec)
	}
	d, err := time.ParseDuration(sec[0])
	if err != nil {
		t.Fatalf("WatchdogSec=%s: %v", sec[0], err)
	}
	if limit := (10*time.Second - 3*time.Second) / 2; d > limit {
		t.Errorf("WatchdogSec=%s: a hung agent with the default lease could outlive it; want at most %v", sec[0], limit)
	}
	if sig := unitLines(t, "WatchdogSignal"); len(sig) != 1 || sig[0] != "SIGKILL" {
		t.Errorf("WatchdogSignal= %q, want SIGKILL (no time spent dumping a hung process)", sig)
	}

	natsBin, _ := binaries(t)
	ns := startNATS(t, natsBin)
	sock := newNotifySocket(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "a.yaml")
	// lease_ttl 2s: renew_interval 500ms, so at most (2s - 500ms)/2 = 750ms.
	conf := fmt.Sprintf("clusters:\n  - name: agentwd\n    connection: {servers: [%q]}\n    election: {node_id: a, lease_ttl: 2s}\n", ns.URL())
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &runProc{node: "a", stderr: filepath.Join(t.TempDir(), "a.stderr"), exited: make(chan struct{})}
	startProc(t, p, []string{"NOTIFY_SOCKET=" + sock.path, "WATCHDOG_USEC=3000000"}, "agent", "--config", file)
	natstest.WaitFor(t, 10*time.Second, func() bool { return sock.count("WATCHDOG_USEC=750000") == 1 },
		"the agent did not lower the watchdog to 750ms: %q", lazy(func() string { return strings.Join(sock.firstLines(), " | ") }))
	natstest.WaitFor(t, 10*time.Second, func() bool { return sock.count("WATCHDOG=1") >= 3 }, "no watchdog pings")
}
