package arplab

import (
	"encoding/json"
	"fmt"
	"net"
	"os/exec"
	"strings"
)

// The lab's names and addresses.
const (
	// IfName is each host's interface on the LAN, a port of the bridge.
	IfName = "eth0"
	// Bridge is the bridge in the observer's namespace.
	Bridge = "br0"
	// VIP is the virtual IP the hosts hold in turn.
	VIP = "192.0.2.100"
	// VIPBits is the VIP's prefix length.
	VIPBits = 24
	// ObserverAddr is the observer's address on the bridge.
	ObserverAddr = "192.0.2.254/24"
	// bridgeMAC is the bridge's (the observer's) MAC, locally administered.
	bridgeMAC = "02:00:00:00:02:fe"
)

// Host is one "host": a namespace whose eth0 is a port of the bridge.
type Host struct {
	ID   string // "a" or "b"
	NS   string // namespace name (ip netns)
	Addr string // its own address on eth0, with the prefix length
	MAC  string // eth0's MAC: the source of its frames
}

// NSPath is the namespace as a file, as vips[].netns and setns take it.
func (h *Host) NSPath() string { return NSPath(h.NS) }

// NSPath is the file of the namespace named name (ip netns add name).
func NSPath(name string) string { return "/var/run/netns/" + name }

// Lab is the whole network.
type Lab struct {
	Hosts      [2]*Host
	ObserverNS string   // the observer's namespace, with the bridge
	made       []string // namespaces to delete
}

// New makes the namespaces prefix-a, prefix-b and prefix-obs. On error
// it deletes what it made.
func New(prefix string) (l *Lab, err error) {
	l = &Lab{ObserverNS: prefix + "-obs"}
	defer func() {
		if err != nil {
			l.Close()
		}
	}()
	if err := l.AddNS(l.ObserverNS); err != nil {
		return nil, err
	}
	steps := [][]string{
		{"link", "set", "lo", "up"},
		// No multicast snooping: VRRP adverts (224.0.0.18) are flooded
		// to every port, whatever IGMP the bridge saw or not.
		{"link", "add", Bridge, "type", "bridge", "mcast_snooping", "0"},
		// A MAC of its own: a bridge left to choose takes its lowest
		// port's, and changes it when ports come and go (Plug), while
		// the observer's probes keep the one it had.
		{"link", "set", Bridge, "address", bridgeMAC},
		{"link", "set", Bridge, "up"},
		{"addr", "add", ObserverAddr, "dev", Bridge},
	}
	for _, s := range steps {
		if _, err := IPIn(l.ObserverNS, s...); err != nil {
			return nil, err
		}
	}
	for i, id := range []string{"a", "b"} {
		h := &Host{ID: id, NS: prefix + "-" + id, Addr: fmt.Sprintf("192.0.2.%d/24", i+1)}
		if err := l.AddNS(h.NS); err != nil {
			return nil, err
		}
		if _, err := IPIn(h.NS, "link", "set", "lo", "up"); err != nil {
			return nil, err
		}
		if err := l.Plug(h); err != nil {
			return nil, err
		}
		l.Hosts[i] = h
	}
	return l, nil
}

// Plug gives h an eth0 on the bridge (a veth whose other end, v<id>, is a
// port of it) with h's address, up; after `ip link del eth0` it makes a
// new one, with a new MAC.
func (l *Lab) Plug(h *Host) (err error) {
	port := "v" + h.ID
	steps := []struct {
		ns   string
		args []string
	}{
		{h.NS, []string{"link", "add", IfName, "type", "veth", "peer", "name", port, "netns", l.ObserverNS}},
		{l.ObserverNS, []string{"link", "set", port, "master", Bridge, "up"}},
		{h.NS, []string{"addr", "add", h.Addr, "dev", IfName}},
		{h.NS, []string{"link", "set", IfName, "up"}},
	}
	for _, s := range steps {
		if _, err := IPIn(s.ns, s.args...); err != nil {
			return err
		}
	}
	h.MAC, err = MACOf(h.NS, IfName)
	return err
}

// AddNS makes the namespace name, deleted with the lab by Close.
func (l *Lab) AddNS(name string) error {
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		return fmt.Errorf("ip netns add %s: %v: %s", name, err, strings.TrimSpace(string(out)))
	}
	l.made = append(l.made, name)
	return nil
}

// Close deletes the namespaces (with the veths and the bridge in them).
// Processes still inside would keep a namespace alive: stop them first.
func (l *Lab) Close() {
	for _, ns := range l.made {
		_ = exec.Command("ip", "netns", "del", ns).Run()
	}
	l.made = nil
}

// Other is the host that is not h.
func (l *Lab) Other(h *Host) *Host {
	if h == l.Hosts[0] {
		return l.Hosts[1]
	}
	return l.Hosts[0]
}

// Holder is the one host that has the VIP on eth0, or nil when none or
// both have it.
func (l *Lab) Holder() (*Host, error) {
	var got []*Host
	for _, h := range l.Hosts {
		ok, err := h.HoldsVIP()
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

// IPIn runs ip -n ns args and returns its output.
func IPIn(ns string, args ...string) ([]byte, error) {
	out, err := exec.Command("ip", append([]string{"-n", ns}, args...)...).CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("ip -n %s %s: %v: %s", ns, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return out, nil
}

// MACOf is the MAC of ifname in ns.
func MACOf(ns, ifname string) (string, error) {
	out, err := IPIn(ns, "-j", "link", "show", "dev", ifname)
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

// HoldsVIP reports whether eth0 has the VIP (with any prefix length).
func (h *Host) HoldsVIP() (bool, error) {
	out, err := IPIn(h.NS, "-j", "-4", "addr", "show", "dev", IfName)
	if err != nil {
		return false, err
	}
	var links []struct {
		AddrInfo []struct {
			Local string `json:"local"`
		} `json:"addr_info"`
	}
	if err := json.Unmarshal(out, &links); err != nil {
		return false, fmt.Errorf("ip addr show in %s: %w", h.NS, err)
	}
	for _, l := range links {
		for _, a := range l.AddrInfo {
			if a.Local == VIP {
				return true, nil
			}
		}
	}
	return false, nil
}

// Cut takes eth0 down: the host falls silent, as if it had crashed.
func (h *Host) Cut() error {
	_, err := IPIn(h.NS, "link", "set", IfName, "down")
	return err
}

// Revive brings eth0 back up without the VIP, as a host that rebooted.
func (h *Host) Revive() error {
	held, err := h.HoldsVIP()
	if err != nil {
		return err
	}
	if held {
		if _, err := IPIn(h.NS, "addr", "del", fmt.Sprintf("%s/%d", VIP, VIPBits), "dev", IfName); err != nil {
			return err
		}
	}
	_, err = IPIn(h.NS, "link", "set", IfName, "up")
	return err
}
