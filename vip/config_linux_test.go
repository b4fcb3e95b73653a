package vip

import (
	"net"
	"testing"
)

func TestMatchesExactly(t *testing.T) {
	s, err := Config{Address: "10.0.0.1", Netmask: 24, Interface: "eth0"}.validate()
	if err != nil {
		t.Fatal(err)
	}
	for cidr, want := range map[string]bool{
		"10.0.0.1/24":         true,
		"110.0.0.1/24":        false,
		"10.0.0.10/24":        false,
		"10.0.0.1/16":         false,
		"10.0.0.1/32":         false,
		"::ffff:10.0.0.1/120": false,
	} {
		ip, n, err := net.ParseCIDR(cidr)
		if err != nil {
			t.Fatal(err)
		}
		n.IP = ip
		if got := s.matches(n); got != want {
			t.Errorf("matches(%s) = %v, want %v", cidr, got, want)
		}
	}
	if s.matches(nil) {
		t.Error("matches(nil)")
	}
}
