package proctest

import (
	"net"
	"time"

	"github.com/ozanturksever/go-cluster/internal/proof/arplab"
)

// netnsDialer dials TCP from inside the network namespace name.
type netnsDialer string

// Dial opens the connection on a thread in the namespace; the socket
// stays there.
func (d netnsDialer) Dial(network, addr string) (net.Conn, error) {
	var c net.Conn
	err := arplab.InNetNS(arplab.NSPath(string(d)), func() error {
		var err error
		c, err = net.DialTimeout(network, addr, time.Second)
		return err
	})
	return c, err
}
