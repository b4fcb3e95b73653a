package agent

import "fmt"

// CheckNodeIDs checks the node ID each cluster of c runs with, as the
// agent would: a cluster without node_id runs as this host's name
// (hostname, or hostErr if it could not be read), which must be a valid
// NodeID (wire.CheckNodeID: an FQDN such as web1.example.com is
// one). node_id itself was checked by Parse. The error is a *ConfigError
// naming the cluster's line; nil when every cluster has a node ID.
func (c *Config) CheckNodeIDs(hostname string, hostErr error) error {
	var problems []Problem
	for i, cl := range c.Clusters {
		if cl.Election.NodeID != "" {
			continue
		}
		path := fmt.Sprintf("clusters[%d].election.node_id", i)
		switch {
		case hostErr != nil:
			problems = append(problems, c.problem(path, "not set, and the host name cannot be read: %v; set node_id", hostErr))
		case hostname == "":
			problems = append(problems, c.problem(path, "not set, and the host name is empty; set node_id"))
		default:
			if err := validateNodeID("host name", hostname); err != "" {
				problems = append(problems, c.problem(path, "not set, and the host name %q cannot be a node ID (%s); set node_id", hostname, err))
			}
		}
	}
	return newConfigError(problems)
}

// problem is a Problem at path of the file c was read from.
func (c *Config) problem(path, format string, args ...any) Problem {
	return Problem{File: c.src.file, Path: path, Line: lineOf(c.src.lines, path), Msg: fmt.Sprintf(format, args...)}
}
