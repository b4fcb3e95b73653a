// Package agent is `go-cluster agent`: a daemon that takes part in one or
// more clusters as configured by a YAML file, holding virtual IPs, running
// notify commands and a supervised service on the leader. This file's
// package holds the configuration (Config, Load) and its validation; see
// docs/agent.md for the file's format.
package agent
