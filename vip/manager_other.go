//go:build !linux

package vip

import (
	"context"
	"log/slog"
)

// Manager manages a virtual IP address. It needs Linux: elsewhere
// NewManager returns ErrUnsupported and every method does too.
type Manager struct {
	s settings
}

// NewManager validates cfg, so that configuration errors are reported the
// same way on every system, then returns ErrUnsupported: managing a
// virtual IP needs Linux.
func NewManager(cfg Config) (*Manager, error) {
	if _, err := cfg.validate(); err != nil {
		return nil, err
	}
	return nil, ErrUnsupported
}

// Config returns the configuration in use.
func (m *Manager) Config() Config { return m.s.Config }

func (m *Manager) logger() *slog.Logger {
	if m == nil {
		return slog.Default()
	}
	return m.s.Logger
}

// Acquire returns ErrUnsupported.
func (m *Manager) Acquire(context.Context) error { return ErrUnsupported }

// Release returns ErrUnsupported.
func (m *Manager) Release(context.Context) error { return ErrUnsupported }

// IsAcquired returns ErrUnsupported.
func (m *Manager) IsAcquired(context.Context) (bool, error) { return false, ErrUnsupported }

// Stats returns the zero Stats: nothing is ever held.
func (m *Manager) Stats() Stats { return Stats{} }
