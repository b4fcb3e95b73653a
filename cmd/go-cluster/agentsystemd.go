package main

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"

	"github.com/ozanturksever/go-cluster/internal/agent"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// systemd tells systemd (Type=notify, WatchdogSec=) about the agent over
// $NOTIFY_SOCKET; without it every call does nothing.
type systemd struct {
	log    *slog.Logger
	unit   time.Duration      // the unit's WatchdogSec=, 0 without a watchdog
	now    time.Duration      // the interval in use (main loop only)
	retune chan time.Duration // a reload's new bound for the watchdog
	stop   chan struct{}
	done   chan struct{}
}

// notify sends state; failures are logged, never fatal.
func (s *systemd) notify(state string) {
	if _, err := daemon.SdNotify(false, state); err != nil {
		s.log.Warn("sd_notify", "state", state, "err", err)
	}
}

// startSystemd reports the agent ready and, when systemd asks for a
// watchdog, pings it at half its interval for as long as the agent
// answers for its clusters' status (an agent stuck on its own lock stops
// pinging, and systemd kills it). The interval is the unit's WatchdogSec=
// or watchdogBound of cfg, whichever is shorter: systemd is told so
// with WATCHDOG_USEC=.
func startSystemd(a *agent.Agent, cfg *agent.Config, log *slog.Logger) *systemd {
	s := &systemd{log: log, retune: make(chan time.Duration, 1), stop: make(chan struct{}), done: make(chan struct{})}
	s.notify(daemon.SdNotifyReady + "\n" + statusLine(a))
	interval, err := daemon.SdWatchdogEnabled(false)
	if err != nil {
		log.Warn("systemd watchdog", "err", err)
	}
	s.unit, s.now = interval, interval
	s.fit(watchdogBound(cfg))
	interval = s.now
	go func() {
		defer close(s.done)
		if interval <= 0 {
			<-s.stop
			return
		}
		tick := time.NewTicker(interval / 2)
		defer tick.Stop()
		for {
			select {
			case <-s.stop:
				return
			case d := <-s.retune:
				tick.Reset(d / 2)
			case <-tick.C:
				s.notify(daemon.SdNotifyWatchdog + "\n" + statusLine(a))
			}
		}
	}()
	return s
}

// fit makes the watchdog interval min(bound, the unit's), telling
// systemd when it changes. Without a watchdog it does nothing.
func (s *systemd) fit(bound time.Duration) {
	if s.unit <= 0 {
		return
	}
	d := min(bound, s.unit)
	if d == s.now {
		return
	}
	s.now = d
	s.notify(fmt.Sprintf("WATCHDOG_USEC=%d", d.Microseconds()))
	s.log.Info("systemd watchdog interval set to fit the shortest lease", "interval", d, "unit", s.unit)
}

// watchdogBound is the longest watchdog interval that still has a hung
// agent killed, and its VIPs removed by ExecStopPost=, before its lease
// can pass on. A hung agent's last renewal landed at most renew_interval
// before it hung, so a follower may take over lease_ttl - renew_interval
// after the hang; systemd kills it at most the interval after its last
// ping, which is at most the hang. Half of lease_ttl - renew_interval,
// for the shortest lease of the file, leaves the other half for the
// SIGKILL and the cleanup.
func watchdogBound(cfg *agent.Config) time.Duration {
	bound := time.Duration(0)
	for _, cl := range cfg.Clusters {
		ttl, renew := leaseTimings(cl.Election)
		if b := (ttl - renew) / 2; bound == 0 || b < bound {
			bound = b
		}
	}
	if bound == 0 {
		ttl, renew := leaseTimings(agent.Election{})
		bound = (ttl - renew) / 2
	}
	return bound
}

// leaseTimings are e's lease_ttl and renew_interval with the library's
// defaults (cluster.Config: wire.DefaultLeaseTTL; wire.DefaultRenewInterval, or
// LeaseTTL/4 when that is more than LeaseTTL/3).
func leaseTimings(e agent.Election) (ttl, renew time.Duration) {
	ttl, renew = e.LeaseTTL.D(), e.RenewInterval.D()
	if ttl == 0 {
		ttl = wire.DefaultLeaseTTL
	}
	if renew == 0 {
		renew = wire.DefaultRenewInterval
		if 3*renew > ttl {
			renew = ttl / 4
		}
	}
	return ttl, renew
}

// reloading and reloaded bracket a reload; the watchdog's interval
// follows the file's leases.
func (s *systemd) reloading() {
	s.notify(daemon.SdNotifyReloading + "\nMONOTONIC_USEC=" + daemon.SdNotifyMonotonicUsec())
}

func (s *systemd) reloaded(a *agent.Agent, cfg *agent.Config) {
	s.notify(daemon.SdNotifyReady + "\n" + statusLine(a))
	if cfg == nil {
		return
	}
	before := s.now
	if s.fit(watchdogBound(cfg)); s.now != before {
		select {
		case s.retune <- s.now:
		default:
		}
	}
}

// stopping says the agent is stopping. The watchdog is still pinged
// while it hands over (systemd may enforce it until the process exits,
// and the handover can take longer than the interval): close ends it.
func (s *systemd) stopping() { s.notify(daemon.SdNotifyStopping) }

// close ends the watchdog's pings.
func (s *systemd) close() {
	close(s.stop)
	<-s.done
}

// statusLine is the STATUS= systemctl status shows: each cluster's role
// as leader or follower.
func statusLine(a *agent.Agent) string {
	var parts []string
	for _, st := range a.Status() {
		role := roleWord(st.Role)
		if !st.Running {
			role = "not running"
		} else if !st.Ready {
			role += ", not ready"
		}
		parts = append(parts, fmt.Sprintf("%s: %s", st.Cluster, role))
	}
	return "STATUS=" + strings.Join(parts, "; ")
}
