//go:build !linux

package vip

import (
	"context"
	"net/netip"
)

// Monitor watches a Manager's interface. It needs Linux: elsewhere Err
// returns ErrUnsupported.
type Monitor struct{}

// NewMonitor returns a Monitor that watches nothing.
func NewMonitor(*Manager, func(error)) *Monitor { return &Monitor{} }

// Err returns ErrUnsupported.
func (*Monitor) Err() error { return ErrUnsupported }

// Close does nothing.
func (*Monitor) Close() {}

// RemoveStray returns ErrUnsupported.
func (m *Manager) RemoveStray(context.Context) ([]netip.Prefix, error) { return nil, ErrUnsupported }

func (m *Manager) held() bool { return false }
