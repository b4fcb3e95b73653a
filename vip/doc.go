// Package vip moves a virtual IP address between hosts: the leader of a
// go-cluster Node holds it.
//
// A Manager adds the address to a network interface with netlink
// (github.com/vishvananda/netlink) and announces it so that neighbours and
// switches send its traffic here at once: a gratuitous ARP request and
// reply for IPv4 (github.com/mdlayher/arp), an unsolicited neighbour
// advertisement for IPv6 (github.com/mdlayher/ndp). No `ip` or `arping`
// process is run.
//
//	m, err := vip.NewManager(vip.Config{Address: "10.0.0.100", Netmask: 24, Interface: "eth0"})
//	...
//	err = m.Acquire(ctx) // add + announce; held until Release
//	...
//	err = m.Release(ctx) // remove
//
// While it holds the address, the Manager watches netlink events: an
// address removed by someone else is put back and re-announced, and so is
// one lost with its interface when the interface comes back (interfaces
// are looked up by name on every operation). IPv6 addresses are added
// without duplicate address detection, which would otherwise hold up a
// failover. Acquire and Release are idempotent.
//
// Like keepalived, a Manager can give an IPv4 address a label
// (Config.Label, "eth0:vip") and add routes with the address
// (Config.Routes, keepalived's virtual_routes): after the address on
// Acquire, from the VIP as their source unless Route.Src says otherwise,
// and removed before it on Release. Routes that go with a removed address
// are put back with it, and at every refresh.
//
// NewHooks returns cluster.Hooks that acquire the address when the node
// becomes leader and release it when leadership ends; see Hooks for what
// happens when acquisition fails, and Hooks.Err for why a leader does not
// hold its address.
//
// NewMonitor watches, from netlink events, whether the interface exists,
// is up and has a carrier (Monitor.Err, an *InterfaceError), and removes
// copies of the address with any prefix while the Manager does not hold it
// (Manager.RemoveStray). Make Monitor.Err and Hooks.Err part of the node's
// readiness check (cluster.Config.ReadinessCheck), and a node that cannot
// hold the address neither leads nor campaigns, as keepalived's
// track_interface does.
//
// # Privileges
//
// Adding and removing addresses needs CAP_NET_ADMIN; sending the
// announcements needs CAP_NET_RAW. A missing capability gives an error
// wrapping ErrNeedNetAdmin or ErrNeedNetRaw (both wrap ErrPermission).
// See README.md in this directory for systemd and container set-ups.
//
// # Platforms
//
// Linux only. Elsewhere the package compiles and NewManager returns
// ErrUnsupported.
//
// # Network namespaces
//
// Config.NetNS names a network namespace to work in (a path such as
// /var/run/netns/blue); the Manager then enters it on a dedicated OS thread
// for every operation, so one process can manage addresses in several
// namespaces. The package's tests use it to run two "hosts" in one
// process.
package vip
