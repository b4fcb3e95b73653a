package agent

import "time"

// Config is an agent's configuration file, as it is written: the zero
// value of a field means "not set" (Defaults fills those in).
type Config struct {
	// Listen is the address of the /metrics and /healthz HTTP endpoints
	// ("127.0.0.1:9273"); empty turns them off.
	Listen string `yaml:"listen"`
	// Clusters are the clusters this agent takes part in, one election
	// each (keepalived's vrrp_instances).
	Clusters []Cluster `yaml:"clusters"`

	src source // where it was read from, for the checks made after Parse
}

// source is the file a Config was read from and the line of each field,
// so that the checks made after Parse (CheckNodeIDs, CheckHost) name
// them as Parse does.
type source struct {
	file  string
	lines map[string]int // field path -> line
}

// Cluster is one cluster the agent campaigns in.
type Cluster struct {
	// Name is the cluster's ID.
	Name       string     `yaml:"name"`
	Connection Connection `yaml:"connection"`
	Election   Election   `yaml:"election"`
	// Checks decide whether this node is ready to lead: all of them must
	// pass.
	Checks []Check `yaml:"checks"`
	// VIPs are added on the leader and removed when it stops leading.
	VIPs   []VIP  `yaml:"vips"`
	Notify Notify `yaml:"notify"`
	// Service, when set, runs only while this node leads.
	Service *Service `yaml:"service"`
	// MaintenanceFile, when it exists, makes this node not ready, as a
	// failing check would.
	MaintenanceFile string `yaml:"maintenance_file"`
}

// Connection is how to reach NATS: the options of the other go-cluster
// commands.
type Connection struct {
	Servers  []string `yaml:"servers"`
	Context  string   `yaml:"context"`
	Creds    string   `yaml:"creds"`
	NKey     string   `yaml:"nkey"`
	User     string   `yaml:"user"`
	Password string   `yaml:"password"`
	TLS      TLS      `yaml:"tls"`
	// JSDomain is the JetStream domain, for agents behind leaf nodes.
	JSDomain string `yaml:"js_domain"`
}

// TLS are the files of a TLS connection.
type TLS struct {
	Cert string `yaml:"cert"`
	Key  string `yaml:"key"`
	CA   string `yaml:"ca"`
}

// Election configures the node that campaigns.
type Election struct {
	// NodeID defaults to the host name.
	NodeID        string   `yaml:"node_id"`
	LeaseTTL      Duration `yaml:"lease_ttl"`
	RenewInterval Duration `yaml:"renew_interval"`
	// Priority makes this node the preferred leader over lower ones.
	Priority int `yaml:"priority"`
	// Preempt (default true): this node, with a higher priority, takes
	// over from a leader with a lower one (keepalived's nopreempt is
	// false here).
	Preempt *bool `yaml:"preempt"`
	// PreemptDelay is keepalived's preempt_delay: how long this node,
	// once connected and ready, waits before it asks a leader with a lower
	// priority to hand over (cluster.Config.PreemptDelay). At least
	// lease_ttl is always waited; at most 24h.
	PreemptDelay Duration          `yaml:"preempt_delay"`
	Metadata     map[string]string `yaml:"metadata"`
	// Replicas of the KV bucket when this node creates it. Default 1.
	Replicas int `yaml:"replicas"`
}

// Check is one readiness check: exactly one of Exec, HTTP, TCP,
// Interface and File.
type Check struct {
	Name      string          `yaml:"name"`
	Exec      *ExecCheck      `yaml:"exec"`
	HTTP      *HTTPCheck      `yaml:"http"`
	TCP       *TCPCheck       `yaml:"tcp"`
	Interface *InterfaceCheck `yaml:"interface"`
	File      *FileCheck      `yaml:"file"`
	Interval  Duration        `yaml:"interval"`
	Timeout   Duration        `yaml:"timeout"`
	// Rise passes in a row make a failed check pass again.
	Rise int `yaml:"rise"`
	// Fall failures in a row make a passing check fail.
	Fall int `yaml:"fall"`
	// Weight, when set, is negative (keepalived's weight -N): a failing
	// check lowers the node's priority by -Weight instead of making it
	// not ready (weights.go).
	Weight int `yaml:"weight"`
}

// ExecCheck passes when the command exits 0 within the timeout (its whole
// process group is killed at the timeout). Exactly one of Argv and Shell.
type ExecCheck struct {
	Argv []string `yaml:"argv"`
	// Shell is a command line run by /bin/sh -c.
	Shell string `yaml:"shell"`
}

// HTTPCheck passes when a GET of URL answers Status.
type HTTPCheck struct {
	URL string `yaml:"url"`
	// Status is the expected status code. Default 200.
	Status             int  `yaml:"status"`
	InsecureSkipVerify bool `yaml:"insecure_skip_verify"`
}

// TCPCheck passes when a TCP connection to Address opens.
type TCPCheck struct {
	Address string `yaml:"address"`
}

// InterfaceCheck passes when the interface is up.
type InterfaceCheck struct {
	Name string `yaml:"name"`
}

// FileCheck passes when the file's presence is Present (default true).
type FileCheck struct {
	Path    string `yaml:"path"`
	Present *bool  `yaml:"present"`
}

// VIP is a virtual IP address held by the leader.
type VIP struct {
	// Address with its prefix length: "10.0.0.100/24", "2001:db8::100/64".
	Address   string `yaml:"address"`
	Interface string `yaml:"interface"`
	// Label is the IPv4 address label ("eth0:vip"); it must start with
	// the interface's name and a colon.
	Label  string  `yaml:"label"`
	GARP   GARP    `yaml:"garp"`
	Routes []Route `yaml:"routes"`
	// NetNS is the path of the network namespace the interface is in
	// ("/var/run/netns/blue"); empty for the agent's own.
	NetNS string `yaml:"netns"`
}

// GARP configures the gratuitous ARP (IPv4) or unsolicited neighbour
// advertisement (IPv6) announcements of a VIP.
type GARP struct {
	// Count of announcement rounds when the address is added. Default 3.
	Count int `yaml:"count"`
	// Interval between the rounds of a burst. Default 200ms.
	Interval Duration `yaml:"interval"`
	// Refresh sends a round this often while the address is held.
	// Default 60s; 0s turns it off.
	Refresh *Duration `yaml:"refresh"`
}

// Route is added with its VIP and removed with it.
type Route struct {
	// To is the destination prefix ("10.1.0.0/16", "default").
	To string `yaml:"to"`
	// Via is the gateway; empty for a route on the link.
	Via string `yaml:"via"`
	// Src is the route's preferred source address; empty for the VIP.
	Src    string `yaml:"src"`
	Metric int    `yaml:"metric"`
	// Table is the routing table's number; 0 (default) is main.
	Table int `yaml:"table"`
}

// Notify are commands run, one at a time and in order, on leadership
// events.
type Notify struct {
	BecomeLeader   []string `yaml:"become_leader"`
	LoseLeadership []string `yaml:"lose_leadership"`
	LeaderChange   []string `yaml:"leader_change"`
	Fault          []string `yaml:"fault"`
	// FaultCleared runs when a node that was not ready (a fault) is
	// ready again.
	FaultCleared []string `yaml:"fault_cleared"`
	// State is keepalived's `notify`: run after the event's own command
	// whenever the node's state changes, with four arguments after its
	// own: INSTANCE, the cluster's name, the state (MASTER, BACKUP, FAULT
	// or STOP) and the configured priority.
	State []string `yaml:"state"`
	// Timeout of each command; its process group is killed then.
	// Default 30s.
	Timeout Duration `yaml:"timeout"`
}

// Service is a command supervised on the leader.
type Service struct {
	Argv []string `yaml:"argv"`
	// Grace between SIGTERM and SIGKILL; default and maximum what the
	// election's timings allow (see runner.MaxGrace).
	Grace Duration `yaml:"grace"`
	// OnExit is what happens when the service exits on its own while
	// leading: "restart" (default, with back-off) or "step_down".
	OnExit         string  `yaml:"on_exit"`
	RestartBackoff Backoff `yaml:"restart_backoff"`
}

// Backoff bounds the delay between restarts; it doubles from Min to Max.
type Backoff struct {
	Min Duration `yaml:"min"`
	Max Duration `yaml:"max"`
}

// Duration is a time.Duration written as Go writes one ("10s", "1m30s").
type Duration time.Duration

// D is d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }
