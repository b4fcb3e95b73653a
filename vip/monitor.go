package vip

import "net/netip"

// InterfaceError says why a VIP cannot be held on this host now: its
// interface does not exist, is down, or has no carrier. Its text names
// the VIP and the interface ("vip 192.0.2.10/24: interface eth0 is
// down"); it wraps ErrInterfaceNotFound or ErrInterfaceDown.
type InterfaceError struct {
	// VIP is the address with its prefix length.
	VIP netip.Prefix
	// Interface is the interface's name.
	Interface string
	// State is what is wrong: "does not exist", "is down" or "has no
	// carrier".
	State string
}

// Interface states of an InterfaceError.
const (
	stateMissing   = "does not exist"
	stateDown      = "is down"
	stateNoCarrier = "has no carrier"
)

// Error implements error.
func (e *InterfaceError) Error() string {
	return "vip " + e.VIP.String() + ": interface " + e.Interface + " " + e.State
}

// Unwrap returns ErrInterfaceNotFound or ErrInterfaceDown.
func (e *InterfaceError) Unwrap() error {
	if e.State == stateMissing {
		return ErrInterfaceNotFound
	}
	return ErrInterfaceDown
}
