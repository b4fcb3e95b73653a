package agent

import (
	"fmt"
	"log/slog"
	"net/netip"

	"github.com/ozanturksever/go-cluster/vip"
)

// vipConfig is the vip package's Config of a VIP of the file (validated).
func vipConfig(v VIP, log *slog.Logger) (vip.Config, error) {
	p, err := netip.ParsePrefix(v.Address)
	if err != nil {
		return vip.Config{}, err
	}
	routes := make([]vip.Route, 0, len(v.Routes))
	for i, r := range v.Routes {
		vr, err := vipRoute(r, p.Addr())
		if err != nil {
			return vip.Config{}, fmt.Errorf("routes[%d]: %w", i, err)
		}
		routes = append(routes, vr)
	}
	return vip.Config{Address: p.Addr().String(), Netmask: p.Bits(), Interface: v.Interface, Logger: log, Label: v.Label,
		Routes: routes, AnnounceCount: v.GARP.Count, AnnounceInterval: v.GARP.Interval.D(), RefreshInterval: v.GARP.Refresh.D(),
		NetNS: v.NetNS}, nil
}

// vipRoute is r as the vip package has it; "default" is the default route
// of the VIP's family.
func vipRoute(r Route, addr netip.Addr) (vip.Route, error) {
	out := vip.Route{Metric: r.Metric, Table: r.Table}
	if r.To == "default" {
		out.To = netip.PrefixFrom(netip.IPv4Unspecified(), 0)
		if addr.Is6() {
			out.To = netip.PrefixFrom(netip.IPv6Unspecified(), 0)
		}
	} else {
		to, err := netip.ParsePrefix(r.To)
		if err != nil {
			return vip.Route{}, fmt.Errorf("to: %w", err)
		}
		out.To = to
	}
	for _, a := range []struct {
		s   string
		dst *netip.Addr
	}{{r.Via, &out.Via}, {r.Src, &out.Src}} {
		if a.s == "" {
			continue
		}
		ip, err := netip.ParseAddr(a.s)
		if err != nil {
			return vip.Route{}, err
		}
		*a.dst = ip
	}
	return out, nil
}
