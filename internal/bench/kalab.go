package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os/exec"
	"strings"
)

// The network of figure 9, in namespaces of its own with documentation
// addresses (TEST-NET-1, RFC 5737): two "hosts" A and B, each with an
// interface eth0, joined by a bridge in a third namespace, the observer's,
// so that the observer receives every frame either host broadcasts.
const (
	labIf      = "eth0"
	labBridge  = "br0"
	labVIP     = "192.0.2.100"
	labVIPBits = 24
	labObsAddr = "192.0.2.254/24"
)

// labHost is one "host": a namespace whose eth0 is a port of the bridge.
type labHost struct {
	id   string // "a" or "b"
	ns   string // namespace name (ip netns)
	addr string // its own address on eth0
	mac  string // eth0's MAC: the source of its frames
}

// nsPath is the namespace as a file, for vips[].netns.
func (h *labHost) nsPath() string { return "/var/run/netns/" + h.ns }

// lab is the whole network.
type lab struct {
	hosts [2]*labHost
	obsNS string   // the observer's namespace
	made  []string // namespaces to delete
}

// newLab makes the namespaces prefix-a, prefix-b and prefix-obs. On error
// it deletes what it made.
func newLab(prefix string) (l *lab, err error) {
	l = &lab{obsNS: prefix + "-obs"}
	defer func() {
		if err != nil {
			l.close()
		}
	}()
	if err := l.addNS(l.obsNS); err != nil {
		return nil, err
	}
	steps := [][]string{
		{"link", "set", "lo", "up"},
		// No multicast snooping: VRRP adverts (224.0.0.18) are flooded
		// to every port, whatever IGMP the bridge saw or not.
		{"link", "add", labBridge, "type", "bridge", "mcast_snooping", "0"},
		{"link", "set", labBridge, "up"},
		{"addr", "add", labObsAddr, "dev", labBridge},
	}
	for _, s := range steps {
		if _, err := ipIn(l.obsNS, s...); err != nil {
			return nil, err
		}
	}
	for i, id := range []string{"a", "b"} {
		h := &labHost{id: id, ns: prefix + "-" + id, addr: fmt.Sprintf("192.0.2.%d/24", i+1)}
		if err := l.addNS(h.ns); err != nil {
			return nil, err
		}
		port := "v" + id
		steps := []struct {
			ns   string
			args []string
		}{
			{h.ns, []string{"link", "set", "lo", "up"}},
			{h.ns, []string{"link", "add", labIf, "type", "veth", "peer", "name", port, "netns", l.obsNS}},
			{l.obsNS, []string{"link", "set", port, "master", labBridge, "up"}},
			{h.ns, []string{"addr", "add", h.addr, "dev", labIf}},
			{h.ns, []string{"link", "set", labIf, "up"}},
		}
		for _, s := range steps {
			if _, err := ipIn(s.ns, s.args...); err != nil {
				return nil, err
			}
		}
		if h.mac, err = macOf(h.ns, labIf); err != nil {
			return nil, err
		}
		l.hosts[i] = h
	}
	return l, nil
}

func (l *lab) addNS(name string) error {
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		return fmt.Errorf("ip netns add %s: %v: %s", name, err, strings.TrimSpace(string(out)))
	}
	l.made = append(l.made, name)
	return nil
}

// close deletes the namespaces (with the veths and the bridge in them).
// Processes still inside would keep a namespace alive: stop them first.
func (l *lab) close() {
	for _, ns := range l.made {
		_ = exec.Command("ip", "netns", "del", ns).Run()
	}
	l.made = nil
}

// other is the host that is not h.
func (l *lab) other(h *labHost) *labHost {
	if h == l.hosts[0] {
		return l.hosts[1]
	}
	return l.hosts[0]
}

// holder is the one host that has the VIP on eth0, or nil when none or
// both have it.
func (l *lab) holder() (*labHost, error) {
	var got []*labHost
	for _, h := range l.hosts {
		ok, err := h.holdsVIP()
		if err != nil {
			return nil, err
		}
		if ok {
			got = append(got, h)
		}
	}
	if len(got) != 1 {
		return nil, nil
	}
	return got[0], nil
}

// ipIn runs ip -n ns args.
func ipIn(ns string, args ...string) ([]byte, error) {
	out, err := exec.Command("ip", append([]string{"-n", ns}, args...)...).CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("ip -n %s %s: %v: %s", ns, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return out, nil
}

// macOf is the MAC of ifname in ns.
func macOf(ns, ifname string) (string, error) {
	out, err := ipIn(ns, "-j", "link", "show", "dev", ifname)
	if err != nil {
		return "", err
	}
	var links []struct {
		Address string `json:"address"`
	}
	if err := json.Unmarshal(out, &links); err != nil || len(links) != 1 {
		return "", fmt.Errorf("ip link show %s in %s: unexpected output %q", ifname, ns, out)
	}
	mac, err := net.ParseMAC(links[0].Address)
	if err != nil {
		return "", err
	}
	return mac.String(), nil
}

// holdsVIP reports whether eth0 has the VIP.
func (h *labHost) holdsVIP() (bool, error) {
	out, err := ipIn(h.ns, "-j", "-4", "addr", "show", "dev", labIf)
	if err != nil {
		return false, err
	}
	var links []struct {
		AddrInfo []struct {
			Local string `json:"local"`
		} `json:"addr_info"`
	}
	if err := json.Unmarshal(out, &links); err != nil {
		return false, fmt.Errorf("ip addr show in %s: %w", h.ns, err)
	}
	for _, l := range links {
		for _, a := range l.AddrInfo {
			if a.Local == labVIP {
				return true, nil
			}
		}
	}
	return false, nil
}

// cut takes eth0 down: the host falls silent, as if it had crashed.
func (h *labHost) cut() error {
	_, err := ipIn(h.ns, "link", "set", labIf, "down")
	return err
}

// revive brings eth0 back up without the VIP, as a host that rebooted.
func (h *labHost) revive() error {
	held, err := h.holdsVIP()
	if err != nil {
		return err
	}
	if held {
		if _, err := ipIn(h.ns, "addr", "del", fmt.Sprintf("%s/%d", labVIP, labVIPBits), "dev", labIf); err != nil {
			return err
		}
	}
	_, err = ipIn(h.ns, "link", "set", labIf, "up")
	return err
}
