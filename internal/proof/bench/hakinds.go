package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ozanturksever/go-cluster/internal/proof/arplab"
)

// haKind is one way of moving the VIP between the hosts of figure 9:
// keepalived with an advert_int, or go-cluster agent with a LeaseTTL.
type haKind struct {
	name   string // for the table
	params string
	agent  bool
	// start runs the daemon of host h; seq makes its files unique.
	start func(h *arplab.Host, seq int) (*haProc, error)
	// following reports whether the daemon p of h is up as a standby.
	following func(h *arplab.Host, p *haProc) bool
	// settle is how long a standby that had missed the holder would take
	// to claim the VIP: a run ends that long after the restarted daemon
	// is up, so that such a claim falls in the run's window.
	settle time.Duration
	// cycle is the holder's heartbeat (advert_int, RenewInterval): a run
	// stops the holder at a random point of it.
	cycle time.Duration
	// bound is the crash failover goal (agent: LeaseTTL + RenewInterval),
	// or keepalived's expected master-down interval.
	bound time.Duration
}

// keepalivedKind runs `keepalived -n` in the host's namespace with one
// vrrp_instance holding the VIP. Its defaults are kept (priority 100 on
// both hosts, so neither preempts the other) except advert_int, and
// version 3 when advert_int is under a second (VRRPv2 rounds it to whole
// seconds). A script reads every state it enters from its notify FIFO
// and writes it to a file.
func keepalivedKind(dir string, advert time.Duration) haKind {
	version := ""
	if advert < time.Second {
		version = "  version 3\n"
	}
	// VRRP's master-down interval: 3 adverts and the skew time
	// (256 - priority) / 256 adverts.
	masterDown := 3*advert + advert*(256-100)/256
	k := haKind{
		name:   fmt.Sprintf("keepalived advert_int %v", advert),
		params: fmt.Sprintf("keepalived %s, VRRPv%s, priority 100 both", keepalivedVersion(), map[bool]string{true: "3", false: "2"}[version != ""]),
		settle: masterDown,
		cycle:  advert,
		bound:  masterDown,
	}
	k.start = func(h *arplab.Host, seq int) (*haProc, error) {
		base := filepath.Join(dir, fmt.Sprintf("ka-%s-%d", h.ID, seq))
		// States go through keepalived's notify FIFO, read by one script:
		// a notify script is a process of its own per change, not waited
		// for, and two changes close together (both hosts claiming the VIP
		// at once, the lower address yielding at once) can land in the
		// file out of order, MASTER last on a host that is BACKUP.
		state := base + ".state"
		script := "#!/bin/sh\nwhile read -r kind name state prio; do\n  case $state in MASTER|BACKUP|FAULT|STOP) echo \"$state\" >> " + state + ";; esac\ndone < \"$1\"\n"
		if err := os.WriteFile(base+".notify", []byte(script), 0o700); err != nil {
			return nil, err
		}
		conf := fmt.Sprintf(`global_defs {
  router_id %s
  vrrp_notify_fifo %s
  vrrp_notify_fifo_script %s
}
vrrp_instance VI_1 {
%s  interface %s
  virtual_router_id 51
  priority 100
  advert_int %g
  virtual_ipaddress {
    %s/%d dev %s
  }
}
`, h.NS, base+".fifo", base+".notify", version, arplab.IfName, advert.Seconds(), arplab.VIP, arplab.VIPBits, arplab.IfName)
		if err := os.WriteFile(base+".conf", []byte(conf), 0o600); err != nil {
			return nil, err
		}
		return startHAProc([]string{"ip", "netns", "exec", h.NS, "keepalived",
			"--dont-fork", "--log-console", "--log-detail", "--no-syslog", "--vrrp",
			"--use-file", base + ".conf", "--pid", base + ".pid", "--vrrp_pid", base + ".vrrp.pid"}, base+".log")
	}
	k.following = func(h *arplab.Host, p *haProc) bool {
		b, _ := os.ReadFile(strings.TrimSuffix(p.log, ".log") + ".state")
		lines := strings.Fields(string(b))
		return p.running() && len(lines) > 0 && lines[len(lines)-1] == "BACKUP"
	}
	return k
}

// keepalivedVersion is what `keepalived --version` says, e.g. v2.2.7.
func keepalivedVersion() string {
	out, _ := runOut("keepalived", "--version")
	for _, f := range strings.Fields(out) {
		if strings.HasPrefix(f, "v") && strings.Count(f, ".") >= 1 {
			return f
		}
	}
	return "(version unknown)"
}

// agentKind runs `go-cluster agent` in the root namespace (NATS on
// loopback) with the VIP on eth0 of the host's namespace (vips[].netns).
// The GARP settings are the agent's defaults, RenewInterval too
// (LeaseTTL/4 under 9 s).
func agentKind(dir, bin, natsURL, clusterID string, ttl time.Duration) haKind {
	renew := ttl / 4
	k := haKind{
		name:   fmt.Sprintf("agent LeaseTTL %v", ttl),
		params: fmt.Sprintf("go-cluster agent, RenewInterval %v, nats-server on loopback", renew),
		agent:  true,
		settle: ttl,
		cycle:  renew,
		bound:  ttl + renew,
	}
	k.start = func(h *arplab.Host, seq int) (*haProc, error) {
		base := filepath.Join(dir, fmt.Sprintf("%s-%s-%d", clusterID, h.ID, seq))
		conf := fmt.Sprintf(`clusters:
  - name: %s
    connection: {servers: [%q]}
    election: {node_id: %s, lease_ttl: %s}
    vips:
      - {address: %s/%d, interface: %s, netns: %s}
`, clusterID, natsURL, h.ID, ttl, arplab.VIP, arplab.VIPBits, arplab.IfName, h.NSPath())
		if err := os.WriteFile(base+".yaml", []byte(conf), 0o600); err != nil {
			return nil, err
		}
		return startHAProc([]string{bin, "agent", "--config", base + ".yaml"}, base+".log")
	}
	k.following = func(_ *arplab.Host, p *haProc) bool { return p.running() && p.logged("node started") }
	return k
}
