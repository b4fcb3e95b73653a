package vip

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestConfigCIDR(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Address: "10.0.0.100", Netmask: 24}, "10.0.0.100/24"},
		{Config{Address: "2001:db8::100", Netmask: 64}, "2001:db8::100/64"},
		{Config{Address: "192.168.1.5", Netmask: 32}, "192.168.1.5/32"},
	} {
		if got := c.cfg.CIDR(); got != c.want {
			t.Errorf("CIDR() = %q, want %q", got, c.want)
		}
	}
}

func TestConfigValidation(t *testing.T) {
	ok := Config{Address: "10.0.0.100", Netmask: 24, Interface: "eth0"}
	with := func(f func(*Config)) Config { c := ok; f(&c); return c }
	for _, c := range []struct {
		name string
		cfg  Config
		want error
	}{
		{"empty address", with(func(c *Config) { c.Address = "" }), ErrInvalidAddress},
		{"garbage", with(func(c *Config) { c.Address = "10.0.0.256" }), ErrInvalidAddress},
		{"hostname", with(func(c *Config) { c.Address = "vip.example.com" }), ErrInvalidAddress},
		{"prefix in address", with(func(c *Config) { c.Address = "10.0.0.1/24" }), ErrInvalidAddress},
		{"unspecified", with(func(c *Config) { c.Address = "0.0.0.0" }), ErrInvalidAddress},
		{"loopback", with(func(c *Config) { c.Address = "127.0.0.2" }), ErrInvalidAddress},
		{"multicast", with(func(c *Config) { c.Address = "224.0.0.1" }), ErrInvalidAddress},
		{"broadcast", with(func(c *Config) { c.Address = "255.255.255.255" }), ErrInvalidAddress},
		{"link-local v6", with(func(c *Config) { c.Address = "fe80::1"; c.Netmask = 64 }), ErrInvalidAddress},
		{"zone", with(func(c *Config) { c.Address = "2001:db8::1%eth0"; c.Netmask = 64 }), ErrInvalidAddress},
		{"v4-mapped", with(func(c *Config) { c.Address = "::ffff:10.0.0.1" }), ErrInvalidAddress},
		{"netmask 0", with(func(c *Config) { c.Netmask = 0 }), ErrInvalidNetmask},
		{"netmask 33", with(func(c *Config) { c.Netmask = 33 }), ErrInvalidNetmask},
		{"netmask negative", with(func(c *Config) { c.Netmask = -1 }), ErrInvalidNetmask},
		{"netmask 129 v6", with(func(c *Config) { c.Address = "2001:db8::1"; c.Netmask = 129 }), ErrInvalidNetmask},
		{"no interface", with(func(c *Config) { c.Interface = "" }), ErrInvalidConfig},
		{"long interface", with(func(c *Config) { c.Interface = "abcdefghijklmnop" }), ErrInvalidConfig},
		{"slash interface", with(func(c *Config) { c.Interface = "eth/0" }), ErrInvalidConfig},
		{"space interface", with(func(c *Config) { c.Interface = "eth 0" }), ErrInvalidConfig},
		{"negative count", with(func(c *Config) { c.AnnounceCount = -1 }), ErrInvalidConfig},
		{"negative interval", with(func(c *Config) { c.AnnounceInterval = -time.Second }), ErrInvalidConfig},
		{"negative refresh", with(func(c *Config) { c.RefreshInterval = -time.Second }), ErrInvalidConfig},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.cfg.validate()
			if !errors.Is(err, c.want) {
				t.Fatalf("validate: %v, want %v", err, c.want)
			}
			if _, err := NewManager(c.cfg); !errors.Is(err, c.want) {
				t.Fatalf("NewManager: %v, want %v", err, c.want)
			}
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	s, err := Config{Address: "2001:db8::100", Netmask: 64, Interface: "eth0"}.validate()
	if err != nil {
		t.Fatal(err)
	}
	if s.AnnounceCount != DefaultAnnounceCount || s.AnnounceInterval != DefaultAnnounceInterval || s.RefreshInterval != 0 || s.Logger == nil {
		t.Fatalf("defaults not applied: %+v", s.Config)
	}
	if s.prefix.String() != "2001:db8::100/64" {
		t.Fatalf("prefix %s", s.prefix)
	}
	for _, a := range []string{"10.0.0.1", "172.16.5.4", "2001:db8::1"} {
		if _, err := (Config{Address: a, Netmask: 8, Interface: "eth0.100"}).validate(); err != nil {
			t.Errorf("%s: %v", a, err)
		}
	}
}

func TestConfigLabelAndRoutesValidation(t *testing.T) {
	v4 := Config{Address: "10.0.0.100", Netmask: 24, Interface: "eth0"}
	v6 := Config{Address: "2001:db8::100", Netmask: 64, Interface: "eth0"}
	route := func(to, via string) Route {
		r := Route{To: netip.MustParsePrefix(to)}
		if via != "" {
			r.Via = netip.MustParseAddr(via)
		}
		return r
	}
	with := func(base Config, f func(*Config)) Config { c := base; f(&c); return c }
	for _, c := range []struct {
		name  string
		cfg   Config
		field string // the error names it
	}{
		{"label on IPv6", with(v6, func(c *Config) { c.Label = "eth0:x" }), "Label"},
		{"label of another interface", with(v4, func(c *Config) { c.Label = "eth1:x" }), "Label"},
		{"label without a name", with(v4, func(c *Config) { c.Label = "eth0:" }), "Label"},
		{"label too long", with(v4, func(c *Config) { c.Label = "eth0:abcdefghijk" }), "Label"},
		{"label with a space", with(v4, func(c *Config) { c.Label = "eth0:a b" }), "Label"},
		{"route without to", with(v4, func(c *Config) { c.Routes = []Route{{}} }), "Routes[0].To"},
		{"route of the other family", with(v4, func(c *Config) { c.Routes = []Route{route("2001:db8:1::/48", "")} }), "Routes[0].To"},
		{"route with host bits", with(v4, func(c *Config) { c.Routes = []Route{route("10.9.0.0/16", ""), route("10.9.1.1/16", "")} }), "Routes[1].To"},
		{"gateway of the other family", with(v6, func(c *Config) { c.Routes = []Route{route("2001:db8:1::/48", "10.0.0.1")} }), "Routes[0].Via"},
		{"multicast gateway", with(v4, func(c *Config) { c.Routes = []Route{route("10.9.0.0/16", "224.0.0.1")} }), "Routes[0].Via"},
		{"source of the other family", with(v4, func(c *Config) {
			c.Routes = []Route{{To: netip.MustParsePrefix("10.9.0.0/16"), Src: netip.MustParseAddr("2001:db8::1")}}
		}), "Routes[0].Src"},
		{"negative metric", with(v4, func(c *Config) { c.Routes = []Route{{To: netip.MustParsePrefix("10.9.0.0/16"), Metric: -1}} }), "Routes[0].Metric"},
		{"negative table", with(v4, func(c *Config) { c.Routes = []Route{{To: netip.MustParsePrefix("10.9.0.0/16"), Table: -1}} }), "Routes[0].Table"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.cfg.validate()
			if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), c.field) {
				t.Fatalf("validate: %v, want ErrInvalidConfig naming %s", err, c.field)
			}
		})
	}

	s, err := with(v4, func(c *Config) {
		c.Label = "eth0:web"
		c.Routes = []Route{route("0.0.0.0/0", "10.0.0.1"), route("10.9.0.0/16", "")}
	}).validate()
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range s.routes {
		if r.Src != netip.MustParseAddr("10.0.0.100") {
			t.Errorf("routes[%d].Src = %v, want the VIP", i, r.Src)
		}
	}
	if s.Config.Routes[0].Src.IsValid() {
		t.Error("Config() should return the routes as given (Src not filled in)")
	}
}
