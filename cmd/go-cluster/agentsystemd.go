package main

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"

	"github.com/ozanturksever/go-cluster/internal/agent"
)

// systemd tells systemd (Type=notify, WatchdogSec=) about the agent over
// $NOTIFY_SOCKET; without it every call does nothing.
type systemd struct {
	log  *slog.Logger
	stop chan struct{}
	done chan struct{}
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
// pinging, and systemd restarts it).
func startSystemd(a *agent.Agent, log *slog.Logger) *systemd {
	s := &systemd{log: log, stop: make(chan struct{}), done: make(chan struct{})}
	s.notify(daemon.SdNotifyReady + "\n" + statusLine(a))
	interval, err := daemon.SdWatchdogEnabled(false)
	if err != nil {
		log.Warn("systemd watchdog", "err", err)
	}
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
			case <-tick.C:
				s.notify(daemon.SdNotifyWatchdog + "\n" + statusLine(a))
			}
		}
	}()
	return s
}

// reloading and reloaded bracket a reload.
func (s *systemd) reloading() {
	s.notify(daemon.SdNotifyReloading + "\nMONOTONIC_USEC=" + daemon.SdNotifyMonotonicUsec())
}

func (s *systemd) reloaded(a *agent.Agent) { s.notify(daemon.SdNotifyReady + "\n" + statusLine(a)) }

// stopping says the agent is stopping and ends the watchdog.
func (s *systemd) stopping() {
	s.notify(daemon.SdNotifyStopping)
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
