// Package arplab is a two-host network in Linux network namespaces, and a
// client on it that asks who-has for a virtual IP every few milliseconds
// and records which hosts answer.
//
// Two "hosts", A and B, each have an interface eth0 that is a port of a
// bridge in a third namespace, the client's (the observer's), so that the
// client receives every frame either host sends on its LAN. The addresses
// are documentation addresses (TEST-NET-1, RFC 5737): the hosts are
// 192.0.2.1 and .2, the client .254 and the VIP .100, all /24.
//
// It is shared by the keepalived comparison of internal/proof/bench (figure 9)
// and the agent lab of internal/proctest. Everything needs root.
package arplab
