package proctest

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/proof/arplab"
)

// unitFile is the shipped systemd unit.
func unitFile() string {
	_, here, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(here), "..", "..", "packaging", "go-cluster-agent.service")
}

// execStopPost reads the unit's ExecStopPost= command lines, and its
// Environment= settings, as systemd would run them after the agent
// exits: $VAR and ${VAR} expanded from the environment (with
// GO_CLUSTER_CONFIG set to config), /usr/bin/go-cluster replaced by the
// built binary, systemd's prefixes (-, @, :, +, !) dropped.
func execStopPost(t *testing.T, config string) (cmds [][]string, env []string) {
	t.Helper()
	f, err := os.Open(unitFile())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	vars := map[string]string{}
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if v, ok := strings.CutPrefix(line, "Environment="); ok {
			for _, kv := range strings.Fields(v) {
				if k, val, ok := strings.Cut(strings.Trim(kv, `"`), "="); ok {
					vars[k] = val
				}
			}
		}
		if v, ok := strings.CutPrefix(line, "ExecStopPost="); ok {
			lines = append(lines, strings.TrimLeft(v, "-@:+!"))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	vars["GO_CLUSTER_CONFIG"] = config
	// What systemd tells ExecStopPost= about a main process killed by
	// a signal.
	vars["SERVICE_RESULT"], vars["EXIT_CODE"], vars["EXIT_STATUS"] = "signal", "killed", "KILL"
	for _, line := range lines {
		var argv []string
		for _, f := range strings.Fields(line) {
			f = os.Expand(f, func(k string) string { return vars[k] })
			if f == "/usr/bin/go-cluster" {
				f = goClusterBinary(t)
			}
			argv = append(argv, f)
		}
		cmds = append(cmds, argv)
	}
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	return cmds, env
}

// labKillCleanup (defect 7): the leading agent is SIGKILLed on a live
// host. The shipped unit's ExecStopPost= commands, run as systemd runs
// them once the main process is gone, must have the VIP off a's eth0
// within 1 s of the kill; b takes over within lease_ttl +
// renew_interval, and the client never gets answers from both.
//
// Until the unit has a cleanup command (issue 33; the agentvip branch
// adds ExecStopPost=/usr/bin/go-cluster agent --cleanup), this fails at
// the first check. The test runs it as root, not as the unit's user with
// its ambient capabilities.
func labKillCleanup(t *testing.T, l *agentLab) {
	a, b := l.a(), l.b()
	l.startPair("labkill")
	file := l.agents[a].cmd.Args[len(l.agents[a].cmd.Args)-1] // --config FILE
	cmds, env := execStopPost(t, file)
	if len(cmds) == 0 {
		t.Fatalf("%s has no ExecStopPost=: nothing removes the VIPs of an agent that was killed", unitFile())
	}
	gone := addrRemoved(t, a.NS, arplab.VIP+"/24")
	since := time.Now()
	killed := time.Now()
	l.agents[a].signal(syscall.SIGKILL)
	<-l.agents[a].exited
	for _, argv := range cmds {
		cmd := exec.Command("ip", append([]string{"netns", "exec", a.NS}, argv...)...)
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("ExecStopPost=%s: %v\n%s", strings.Join(argv, " "), err, out)
		}
	}
	select {
	case at := <-gone:
		t.Logf("a's VIP removed %v after SIGKILL", at.Sub(killed).Round(time.Millisecond))
		if at.Sub(killed) > time.Second {
			t.Errorf("a's VIP removed %v after SIGKILL; want within 1 s", at.Sub(killed).Round(time.Millisecond))
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("a's VIP still on its eth0 5 s after SIGKILL and the unit's cleanup; want it gone within 1 s")
	}
	took, ok := l.waitGARP(b, killed, 3*labTTL)
	if !ok || took > labTTL+labRenew {
		t.Errorf("b's first gratuitous ARP %v after the kill (zero: none); want within %v", took, labTTL+labRenew)
	}
	if split := l.watch.SplitBrain(since, time.Now()); split.Overlap() {
		t.Errorf("both hosts answered the client after the kill: %+v", split)
	}
}
