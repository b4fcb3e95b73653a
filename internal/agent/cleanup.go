package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/ozanturksever/go-cluster/vip"
)

// Cleanup removes every VIP of cfg from this host: its routes, the
// address, and any other address with its IP on its interface whatever
// the prefix. It is what `go-cluster agent --cleanup` does, run by the
// systemd unit's ExecStopPost= after the agent exits for any reason
// (SIGKILL, a crash, the watchdog), so that a dead agent's VIPs do not
// outlive it. Every VIP is tried; the errors are joined.
func Cleanup(ctx context.Context, cfg *Config, log *slog.Logger) error {
	var errs []error
	for _, cl := range cfg.WithDefaults("").Clusters {
		for i, v := range cl.VIPs {
			if err := cleanupVIP(ctx, v, log.With("cluster", cl.Name)); err != nil {
				errs = append(errs, fmt.Errorf("cluster %s: vips[%d] %s: %w", cl.Name, i, v.Address, err))
			}
		}
	}
	return errors.Join(errs...)
}

// cleanupVIP removes one VIP, its routes and its copies.
func cleanupVIP(ctx context.Context, v VIP, log *slog.Logger) error {
	vc, err := vipConfig(v, log)
	if err != nil {
		return err
	}
	m, err := vip.NewManager(vc)
	if err != nil {
		return err
	}
	if err := m.Release(ctx); err != nil {
		return err
	}
	_, err = m.RemoveStray(ctx)
	return err
}
