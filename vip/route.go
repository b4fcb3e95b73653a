package vip

import (
	"fmt"
	"net/netip"
	"strings"
)

// Route is a route added with the virtual IP and removed with it, like a
// keepalived virtual_route: traffic to To leaves through the VIP's
// interface, from the VIP, only on the host that holds it.
type Route struct {
	// To is the destination ("10.9.0.0/16"; 0.0.0.0/0 or ::/0 for a
	// default route), of the VIP's address family, host bits zero.
	To netip.Prefix
	// Via is the gateway, of the VIP's family; the zero Addr makes the
	// route a link route (scope link: To is on the VIP's link).
	Via netip.Addr
	// Src is the preferred source address of the route; the zero Addr
	// means the VIP itself (keepalived's default). It must be an address
	// of this host when the route is added.
	Src netip.Addr
	// Metric is the route's priority (the `ip route` metric); lower wins.
	// Default 0.
	Metric int
	// Table is the routing table; 0 means the main table.
	Table int
}

// String returns the route as `ip route` writes it.
func (r Route) String() string {
	var b strings.Builder
	b.WriteString(r.To.String())
	if r.Via.IsValid() {
		b.WriteString(" via " + r.Via.String())
	}
	if r.Src.IsValid() {
		b.WriteString(" src " + r.Src.String())
	}
	if r.Metric != 0 {
		fmt.Fprintf(&b, " metric %d", r.Metric)
	}
	if r.Table != 0 {
		fmt.Fprintf(&b, " table %d", r.Table)
	}
	return b.String()
}

// validateRoutes checks routes against the VIP addr and returns them with
// Src defaulted to addr. Errors wrap ErrInvalidConfig and name the field.
func validateRoutes(routes []Route, addr netip.Addr) ([]Route, error) {
	out := make([]Route, 0, len(routes))
	for i, r := range routes {
		field := fmt.Sprintf("Routes[%d]", i)
		if err := r.validate(addr); err != nil {
			return nil, fmt.Errorf("%w: %s%w", ErrInvalidConfig, field, err)
		}
		if !r.Src.IsValid() {
			r.Src = addr
		}
		out = append(out, r)
	}
	return out, nil
}

// fieldError is an error whose text starts with the field's name
// (".To: ..."), so that validateRoutes can prefix the route's index.
type fieldError struct{ field, msg string }

func (e fieldError) Error() string { return "." + e.field + ": " + e.msg }

func (r Route) validate(addr netip.Addr) error {
	switch {
	case !r.To.IsValid():
		return fieldError{"To", "missing or invalid prefix"}
	case r.To.Addr().Is4() != addr.Is4() || r.To.Addr().Is4In6():
		return fieldError{"To", fmt.Sprintf("%s is not of the VIP's address family", r.To)}
	case r.To.Addr().Zone() != "":
		return fieldError{"To", fmt.Sprintf("%s has a zone", r.To)}
	case r.To != r.To.Masked():
		return fieldError{"To", fmt.Sprintf("%s has host bits set (want %s)", r.To, r.To.Masked())}
	}
	if r.Via.IsValid() {
		switch {
		case r.Via.Is4() != addr.Is4() || r.Via.Is4In6():
			return fieldError{"Via", fmt.Sprintf("%s is not of the VIP's address family", r.Via)}
		case r.Via.Zone() != "":
			return fieldError{"Via", fmt.Sprintf("%s has a zone (the interface is Config.Interface)", r.Via)}
		case r.Via.IsUnspecified() || r.Via.IsMulticast() || r.Via.IsLoopback():
			return fieldError{"Via", fmt.Sprintf("%s cannot be a gateway", r.Via)}
		}
	}
	if r.Src.IsValid() {
		switch {
		case r.Src.Is4() != addr.Is4() || r.Src.Is4In6():
			return fieldError{"Src", fmt.Sprintf("%s is not of the VIP's address family", r.Src)}
		case r.Src.Zone() != "" || r.Src.IsUnspecified() || r.Src.IsMulticast():
			return fieldError{"Src", fmt.Sprintf("%s cannot be a source address", r.Src)}
		}
	}
	if r.Metric < 0 || int64(r.Metric) > 1<<32-1 {
		return fieldError{"Metric", fmt.Sprintf("%d is out of range (0-4294967295)", r.Metric)}
	}
	if r.Table < 0 || int64(r.Table) > 1<<32-1 {
		return fieldError{"Table", fmt.Sprintf("%d is out of range (0-4294967295; 0 is main)", r.Table)}
	}
	return nil
}

// validateLabel checks an IPv4 address label: "<Interface>:<suffix>", at
// most 15 bytes (the kernel's IFNAMSIZ), no white space.
func validateLabel(label, ifname string, addr netip.Addr) error {
	if label == "" {
		return nil
	}
	switch {
	case !addr.Is4():
		return fmt.Errorf("%w: Label %q: labels are for IPv4 addresses only", ErrInvalidConfig, label)
	case !strings.HasPrefix(label, ifname+":") || len(label) == len(ifname)+1:
		return fmt.Errorf("%w: Label %q must be %q followed by a name", ErrInvalidConfig, label, ifname+":")
	case len(label) > 15:
		return fmt.Errorf("%w: Label %q is longer than 15 bytes", ErrInvalidConfig, label)
	case strings.ContainsAny(label, "/ \t\n\r\v\f") || strings.IndexByte(label, 0) >= 0:
		return fmt.Errorf("%w: Label %q contains '/', white space or NUL", ErrInvalidConfig, label)
	}
	return nil
}
