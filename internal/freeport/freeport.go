// Package freeport finds TCP ports on loopback for servers whose ports must
// be known before they start: the members of a NATS cluster list each
// other's route ports, and a restarted member must come back on its own.
package freeport

import (
	"fmt"
	"net"
)

// Reserve returns n distinct TCP ports on 127.0.0.1 that were free a moment
// ago. All n are held open until every one is found, so none repeats.
func Reserve(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("reserve port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
