package agent

import (
	"errors"
	"fmt"
	"os/exec"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// CheckHost checks c against the host it is read on, for what Parse
// cannot see in the file alone and the agent would only meet later: a
// VIP's interface that does not exist here (in its netns, if it names
// one), a command that cannot be run here (an exec check's argv[0], or
// /bin/sh for a shell check; a notify command's; the service's), and,
// with connect, a connection that cannot be made from the file (connect
// is what the agent's Options.Connect would be). c is as Parse returned
// it. The error is a *ConfigError naming each field and its line.
func (c *Config) CheckHost(connect func(Cluster) (Endpoint, error)) error {
	var problems []Problem
	add := func(path, msg string) {
		if msg != "" {
			problems = append(problems, c.problem(path, "%s", msg))
		}
	}
	for i, cl := range c.Clusters {
		p := fmt.Sprintf("clusters[%d]", i)
		if connect != nil {
			if _, err := connect(cl); err != nil {
				add(p+".connection", err.Error())
			}
		}
		for j, ch := range cl.Checks {
			switch {
			case ch.Exec == nil:
			case ch.Exec.Shell != "":
				add(fmt.Sprintf("%s.checks[%d].exec.shell", p, j), commandProblem(shellPath))
			case len(ch.Exec.Argv) > 0:
				add(fmt.Sprintf("%s.checks[%d].exec.argv[0]", p, j), commandProblem(ch.Exec.Argv[0]))
			}
		}
		for _, n := range cl.Notify.commands() {
			if len(n.argv) > 0 {
				add(p+".notify."+n.key+"[0]", commandProblem(n.argv[0]))
			}
		}
		if cl.Service != nil && len(cl.Service.Argv) > 0 {
			add(p+".service.argv[0]", commandProblem(cl.Service.Argv[0]))
		}
		for j, v := range cl.VIPs {
			add(fmt.Sprintf("%s.vips[%d].interface", p, j), interfaceProblem(v.Interface, v.NetNS))
		}
	}
	return newConfigError(problems)
}

// commandProblem says why argv0 cannot be run here, "" if it can: the
// agent starts commands with exec.Command, which looks them up the same
// way (PATH for a bare name; a path must be an executable file).
func commandProblem(argv0 string) string {
	if _, err := exec.LookPath(argv0); err != nil {
		return fmt.Sprintf("cannot be run on this host: %v", err)
	}
	return ""
}

// interfaceProblem says why the interface name is not there for a VIP,
// "" if it is: in the agent's network namespace, or in the one at path
// nsPath. It is looked up through netlink, as the vip package does.
func interfaceProblem(name, nsPath string) string {
	if name == "" {
		return "" // reported by Parse
	}
	lookup, where := netlink.LinkByName, "on this host"
	if nsPath != "" {
		ns, err := netns.GetFromPath(nsPath)
		if err != nil {
			return fmt.Sprintf("cannot open network namespace %s to look for interface %q: %v", nsPath, name, err)
		}
		defer ns.Close()
		h, err := netlink.NewHandleAt(ns)
		if err != nil {
			return fmt.Sprintf("cannot enter network namespace %s to look for interface %q: %v (the agent needs to enter it too)", nsPath, name, err)
		}
		defer h.Close()
		lookup, where = h.LinkByName, "in network namespace "+nsPath
	}
	if _, err := lookup(name); err != nil {
		var notFound netlink.LinkNotFoundError
		if errors.As(err, &notFound) {
			return fmt.Sprintf("no interface %q %s", name, where)
		}
		return fmt.Sprintf("cannot look for interface %q %s: %v", name, where, err)
	}
	return ""
}
