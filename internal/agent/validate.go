package agent

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/runner"
	"github.com/ozanturksever/go-cluster/internal/wire"
	"github.com/ozanturksever/go-cluster/vip"
)

// validator checks a decoded Config; its problems join the decoder's.
type validator struct {
	*decoder
	decodeProblems int // the first ones: where decoding already failed
}

// bad records a problem at path, on the line of path (or of the nearest
// field above it that has one), unless decoding failed there already: a
// value that could not be read is not also reported as missing.
func (v *validator) bad(path, format string, args ...any) {
	for _, p := range v.problems[:v.decodeProblems] {
		if p.Path == path || strings.HasPrefix(path, p.Path+".") || strings.HasPrefix(path, p.Path+"[") {
			return
		}
	}
	v.fail(path, v.lineOf(path), format, args...)
}

// lineOf is the line of path, or of the closest field above it.
func (v *validator) lineOf(path string) int { return lineOf(v.lines, path) }

// lineOf is the line of path in lines, or of the closest field above it.
func lineOf(lines map[string]int, path string) int {
	for path != "" {
		if l, ok := lines[path]; ok {
			return l
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			break
		}
		path = path[:i]
	}
	return 0
}

func (v *validator) config(c *Config) {
	if c.Listen != "" {
		if _, _, err := net.SplitHostPort(c.Listen); err != nil {
			v.bad("listen", "want HOST:PORT, as in 127.0.0.1:9273: %v", err)
		}
	}
	if len(c.Clusters) == 0 {
		v.bad("clusters", "at least one cluster is needed")
	}
	names := map[string]string{}
	vips := map[netip.Addr]string{}
	for i := range c.Clusters {
		p := fmt.Sprintf("clusters[%d]", i)
		cl := &c.Clusters[i]
		if err := wire.CheckIdentifier("name", cl.Name); err != nil {
			v.bad(p+".name", "%s", trimInvalid(err))
		} else if first, dup := names[cl.Name]; dup {
			v.bad(p+".name", "cluster %q is already configured at %s", cl.Name, first)
		} else {
			names[cl.Name] = p
		}
		v.connection(p+".connection", &cl.Connection)
		v.election(p+".election", &cl.Election)
		v.checks(p+".checks", cl.Checks)
		v.weights(p+".checks", cl.Checks, &cl.Election)
		v.vips(p+".vips", cl.VIPs, vips)
		v.notify(p+".notify", &cl.Notify)
		if cl.Service != nil {
			v.service(p+".service", cl.Service, &cl.Election)
		}
		if cl.MaintenanceFile != "" && !filepath.IsAbs(cl.MaintenanceFile) {
			v.bad(p+".maintenance_file", "%q is not an absolute path", cl.MaintenanceFile)
		}
	}
}

// trimInvalid drops the library's "invalid config: " prefix.
func trimInvalid(err error) string {
	return strings.TrimPrefix(err.Error(), cluster.ErrInvalidConfig.Error()+": ")
}

func (v *validator) connection(p string, c *Connection) {
	for i, s := range c.Servers {
		for _, one := range strings.Split(s, ",") {
			u, err := url.Parse(strings.TrimSpace(one))
			if err != nil || u.Host == "" {
				v.bad(fmt.Sprintf("%s.servers[%d]", p, i), "%q is not a server URL such as nats://10.0.0.1:4222", one)
				continue
			}
			switch u.Scheme {
			case "nats", "tls", "ws", "wss":
			default:
				v.bad(fmt.Sprintf("%s.servers[%d]", p, i), "scheme %q: want nats, tls, ws or wss", u.Scheme)
			}
		}
	}
	methods := 0
	for _, set := range []bool{c.User != "" || c.Password != "", c.Creds != "", c.NKey != ""} {
		if set {
			methods++
		}
	}
	if methods > 1 {
		v.bad(p, "more than one of user/password, creds and nkey: use one")
	}
	if c.Password != "" && c.User == "" {
		v.bad(p+".password", "a password without a user")
	}
	if (c.TLS.Cert == "") != (c.TLS.Key == "") {
		v.bad(p+".tls", "a client certificate needs both cert and key")
	}
	for _, f := range []struct{ path, file string }{
		{p + ".creds", c.Creds}, {p + ".nkey", c.NKey}, {p + ".tls.cert", c.TLS.Cert}, {p + ".tls.key", c.TLS.Key}, {p + ".tls.ca", c.TLS.CA},
	} {
		if f.file == "" {
			continue
		}
		if _, err := os.Stat(f.file); err != nil {
			v.bad(f.path, "%v", err)
		}
	}
	if strings.ContainsAny(c.JSDomain, " .*>") {
		v.bad(p+".js_domain", "%q: a domain has no spaces, dots or wildcards", c.JSDomain)
	}
}

func (v *validator) election(p string, e *Election) {
	if e.NodeID != "" {
		if msg := validateNodeID("node_id", e.NodeID); msg != "" {
			v.bad(p+".node_id", "%s", msg)
		}
	}
	ttl := e.LeaseTTL.D()
	if ttl != 0 && (ttl < wire.MinLeaseTTL || ttl > wire.MaxLeaseTTL) {
		v.bad(p+".lease_ttl", "%v must be between %v and %v", ttl, wire.MinLeaseTTL, wire.MaxLeaseTTL)
		return
	}
	nc := e.nodeConfig("c", "n")
	if _, err := cluster.NewNode(nc, nil); err != nil { // checks the config; connects nothing
		v.bad(p+electionField(err), "%s", trimInvalid(err))
	}
	if e.Priority < 0 {
		v.bad(p+".priority", "%d is negative", e.Priority)
	}
	if e.Replicas < 0 || e.Replicas > 5 {
		v.bad(p+".replicas", "%d must be between 1 and 5", e.Replicas)
	}
}

// validateNodeID says what the library finds wrong with id as a NodeID
// (wire.CheckNodeID: a host name is one), "" if nothing.
func validateNodeID(field, id string) string {
	if err := wire.CheckNodeID(field, id); err != nil {
		return trimInvalid(err)
	}
	return ""
}

// electionField is the YAML field a library Config error is about: its
// message starts with the library's name of the field.
func electionField(err error) string {
	msg := trimInvalid(err)
	for _, f := range []struct{ lib, yaml string }{
		{"RenewInterval", ".renew_interval"}, {"LeaseTTL", ".lease_ttl"}, {"SafetyMargin", ".lease_ttl"},
		{"RequestTimeout", ".lease_ttl"}, {"Priority", ".priority"}, {"PreemptDelay", ".preempt_delay"}, {"Bucket.Replicas", ".replicas"}, {"Metadata", ".metadata"},
	} {
		if strings.HasPrefix(msg, f.lib) {
			return f.yaml
		}
	}
	return ""
}

// nodeConfig is the library's Config of the election (no connection).
func (e *Election) nodeConfig(clusterID, nodeID string) cluster.Config {
	return cluster.Config{ClusterID: clusterID, NodeID: nodeID, NATSURLs: []string{"nats://unused"},
		LeaseTTL: e.LeaseTTL.D(), RenewInterval: e.RenewInterval.D(), Priority: e.Priority,
		PreemptDelay: e.PreemptDelay.D(), Metadata: e.Metadata, Bucket: cluster.BucketOptions{Replicas: max(e.Replicas, 0)}}
}

func (v *validator) checks(p string, checks []Check) {
	names := map[string]bool{}
	for i := range checks {
		c := &checks[i]
		cp := fmt.Sprintf("%s[%d]", p, i)
		if c.Name == "" {
			v.bad(cp+".name", "a check needs a name")
		} else if names[c.Name] {
			v.bad(cp+".name", "another check is named %q", c.Name)
		}
		names[c.Name] = true
		kinds := 0
		for _, set := range []bool{c.Exec != nil, c.HTTP != nil, c.TCP != nil, c.Interface != nil, c.File != nil} {
			if set {
				kinds++
			}
		}
		if kinds != 1 {
			v.bad(cp, "a check has exactly one of exec, http, tcp, interface and file (this one has %d)", kinds)
		}
		v.checkKind(cp, c)
		if c.Interval < 0 {
			v.bad(cp+".interval", "%v is negative", c.Interval.D())
		}
		if c.Timeout < 0 || c.Interval > 0 && c.Timeout > c.Interval {
			v.bad(cp+".timeout", "%v must be between 0 and the interval", c.Timeout.D())
		}
		if c.Rise < 0 {
			v.bad(cp+".rise", "%d is negative", c.Rise)
		}
		if c.Fall < 0 {
			v.bad(cp+".fall", "%d is negative", c.Fall)
		}
	}
}

func (v *validator) checkKind(cp string, c *Check) {
	switch {
	case c.Exec != nil:
		if (len(c.Exec.Argv) == 0) == (c.Exec.Shell == "") {
			v.bad(cp+".exec", "give exactly one of argv (run as it is) and shell (run by /bin/sh -c)")
		}
		v.argv(cp+".exec.argv", c.Exec.Argv)
	case c.HTTP != nil:
		u, err := url.Parse(c.HTTP.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			v.bad(cp+".http.url", "%q is not an http:// or https:// URL", c.HTTP.URL)
		}
		if c.HTTP.Status != 0 && (c.HTTP.Status < 100 || c.HTTP.Status > 599) {
			v.bad(cp+".http.status", "%d is not an HTTP status", c.HTTP.Status)
		}
	case c.TCP != nil:
		if _, _, err := net.SplitHostPort(c.TCP.Address); err != nil {
			v.bad(cp+".tcp.address", "want HOST:PORT: %v", err)
		}
	case c.Interface != nil:
		if err := interfaceName(c.Interface.Name); err != "" {
			v.bad(cp+".interface.name", "%s", err)
		}
	case c.File != nil:
		if !filepath.IsAbs(c.File.Path) {
			v.bad(cp+".file.path", "%q is not an absolute path", c.File.Path)
		}
	}
}

// argv checks an optional command line.
func (v *validator) argv(p string, argv []string) {
	if len(argv) > 0 && argv[0] == "" {
		v.bad(p+"[0]", "the command is empty")
	}
}

// interfaceName says what is wrong with a Linux interface name, "" if nothing.
func interfaceName(name string) string {
	switch {
	case name == "":
		return "an interface name is needed"
	case len(name) > 15:
		return fmt.Sprintf("%q is longer than 15 bytes", name)
	case strings.ContainsAny(name, "/: \t\n") || name == "." || name == "..":
		return fmt.Sprintf("%q is not an interface name", name)
	}
	return ""
}

func (v *validator) vips(p string, vips []VIP, taken map[netip.Addr]string) {
	for i := range vips {
		x := &vips[i]
		vp := fmt.Sprintf("%s[%d]", p, i)
		before := len(v.problems)
		v.vip(vp, x, taken)
		if len(v.problems) == before {
			v.vipAsBuilt(vp, x)
		}
	}
}

// vip checks one VIP of the file.
func (v *validator) vip(vp string, x *VIP, taken map[netip.Addr]string) {
	pfx, err := netip.ParsePrefix(x.Address)
	if err != nil {
		v.bad(vp+".address", "want an address with its prefix length, as in 10.0.0.100/24: %v", err)
	} else {
		a := pfx.Addr()
		switch {
		case a.Zone() != "" || a.Is4In6() || a.IsUnspecified() || a.IsLoopback() || a.IsMulticast() || a.IsLinkLocalUnicast():
			v.bad(vp+".address", "%s cannot be a virtual IP (zoned, mapped, unspecified, loopback, multicast or link-local)", a)
		case taken[a] != "":
			v.bad(vp+".address", "%s is already a VIP at %s", a, taken[a])
		default:
			taken[a] = vp
		}
	}
	if msg := interfaceName(x.Interface); msg != "" {
		v.bad(vp+".interface", "%s", msg)
	}
	if x.Label != "" {
		switch {
		case err == nil && !pfx.Addr().Is4():
			v.bad(vp+".label", "labels are for IPv4 addresses only")
		case !strings.HasPrefix(x.Label, x.Interface+":") || len(x.Label) == len(x.Interface)+1 || len(x.Label) > 15 ||
			strings.ContainsAny(x.Label, "/ \t\n\r\v\f\x00"):
			v.bad(vp+".label", "%q must be %q and a name, at most 15 bytes, without '/' or white space", x.Label, x.Interface+":")
		}
	}
	if x.GARP.Count < 0 {
		v.bad(vp+".garp.count", "%d is negative", x.GARP.Count)
	}
	if x.GARP.Interval < 0 {
		v.bad(vp+".garp.interval", "%v is negative", x.GARP.Interval.D())
	}
	if x.GARP.Refresh != nil && *x.GARP.Refresh < 0 {
		v.bad(vp+".garp.refresh", "%v is negative", x.GARP.Refresh.D())
	}
	v.routes(vp+".routes", x.Routes, pfx)
	if x.NetNS != "" && !filepath.IsAbs(x.NetNS) {
		v.bad(vp+".netns", "%q is not an absolute path", x.NetNS)
	}
}

// vipAsBuilt runs the vip package's own validation of a VIP that passed
// the file's (vip.NewManager, as the agent builds it), so that no VIP
// passes --check that the agent would then refuse (a /0 prefix, say).
func (v *validator) vipAsBuilt(vp string, x *VIP) {
	full := Cluster{VIPs: []VIP{*x}}.withDefaults("")
	vc, err := vipConfig(full.VIPs[0], nil)
	if err == nil {
		_, err = vip.NewManager(vc)
	}
	switch {
	case err == nil:
	case errors.Is(err, vip.ErrInvalidAddress), errors.Is(err, vip.ErrInvalidNetmask):
		v.bad(vp+".address", "%v", err)
	default:
		v.bad(vp, "%v", err)
	}
}

func (v *validator) routes(p string, routes []Route, vip netip.Prefix) {
	for i, r := range routes {
		rp := fmt.Sprintf("%s[%d]", p, i)
		var to netip.Prefix
		var err error
		if r.To == "default" {
			to = netip.PrefixFrom(netip.IPv4Unspecified(), 0)
			if vip.IsValid() && vip.Addr().Is6() {
				to = netip.PrefixFrom(netip.IPv6Unspecified(), 0)
			}
		} else if to, err = netip.ParsePrefix(r.To); err != nil {
			v.bad(rp+".to", "want a prefix such as 10.1.0.0/16, or default: %v", err)
			continue
		}
		if vip.IsValid() && to.Addr().Is4() != vip.Addr().Is4() {
			v.bad(rp+".to", "%s is not of the VIP's address family", r.To)
		} else if to != to.Masked() {
			v.bad(rp+".to", "%s has host bits set: write %s", r.To, to.Masked())
		}
		if r.Via != "" {
			via, err := netip.ParseAddr(r.Via)
			if err != nil {
				v.bad(rp+".via", "want a gateway address: %v", err)
			} else if via.Is4() != to.Addr().Is4() {
				v.bad(rp+".via", "%s is not of the route's address family", r.Via)
			}
		}
		if r.Src != "" {
			src, err := netip.ParseAddr(r.Src)
			if err != nil {
				v.bad(rp+".src", "want a source address: %v", err)
			} else if src.Is4() != to.Addr().Is4() {
				v.bad(rp+".src", "%s is not of the route's address family", r.Src)
			}
		}
		if r.Metric < 0 {
			v.bad(rp+".metric", "%d is negative", r.Metric)
		}
		if r.Table < 0 {
			v.bad(rp+".table", "%d is negative", r.Table)
		}
	}
}

func (v *validator) notify(p string, n *Notify) {
	for _, c := range n.commands() {
		v.argv(p+"."+c.key, c.argv)
	}
	if n.Timeout < 0 {
		v.bad(p+".timeout", "%v is negative", n.Timeout.D())
	}
}

func (v *validator) service(p string, s *Service, e *Election) {
	if len(s.Argv) == 0 {
		v.bad(p+".argv", "a service needs a command")
	}
	v.argv(p+".argv", s.Argv)
	switch s.OnExit {
	case "", OnExitRestart, OnExitStepDown:
	default:
		v.bad(p+".on_exit", "%q: want %s or %s", s.OnExit, OnExitRestart, OnExitStepDown)
	}
	if s.RestartBackoff.Min < 0 || s.RestartBackoff.Max < 0 {
		v.bad(p+".restart_backoff", "negative")
	} else if s.RestartBackoff.Max != 0 && s.RestartBackoff.Min > s.RestartBackoff.Max {
		v.bad(p+".restart_backoff.min", "%v is above max %v", s.RestartBackoff.Min.D(), s.RestartBackoff.Max.D())
	}
	if s.Grace < 0 {
		v.bad(p+".grace", "%v is negative", s.Grace.D())
		return
	}
	n, err := cluster.NewNode(e.nodeConfig("c", "n"), nil)
	if err != nil {
		return // reported under election
	}
	if limit := runner.MaxGrace(n.Config()); s.Grace.D() > limit {
		v.bad(p+".grace", "%v is longer than the election's timings allow (at most %v with lease_ttl %v); raise lease_ttl or shorten the grace",
			s.Grace.D(), limit.Round(time.Millisecond), n.Config().LeaseTTL)
	}
}

// What a service's exit while leading does.
const (
	OnExitRestart  = "restart"
	OnExitStepDown = "step_down"
)
