package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

// commandImpl is one subcommand: its own flags, and what it does.
type commandImpl interface {
	// define adds the command's own flags to fs.
	define(fs *pflag.FlagSet)
	// run carries the command out; args are its positional arguments.
	run(ctx context.Context, e *env, args []string) error
}

// command describes a subcommand.
type command struct {
	name     string
	synopsis string // positional arguments and own flags, for usage
	summary  string
	maxArgs  int
	impl     commandImpl
}

// commands returns the subcommands, each with a fresh implementation.
func commands() []command {
	return []command{
		{"status", "[--settle D]", "show the leader, its epoch and lease, and every member with role and health", 0, &statusCmd{}},
		{"watch", "[--all] [--count N]", "stream leadership changes as they are written to the lease", 0, &watchCmd{}},
		{"stepdown", "[--to NODE] [--force] [--wait=false]", "ask the leader to step down, optionally in favour of NODE", 0, &stepdownCmd{}},
		{"health", "[--settle D] [NODE]", "show the health of one node, or of every node", 1, &healthCmd{}},
		{"init", "[--replicas N] [--storage file|memory] [--placement-cluster C] [--placement-tags a,b] [--lease-ttl D] [--rebase] [--upgrade [--wait]]", "create the cluster's bucket ahead of time with the library's settings (its first election can be its TTL ceiling after it); change its LeaseTTL, its epoch base after a restore, its protocol", 0, &initCmd{}},
		{"state get", "KEY", "print the value of a state key (--json: with its revision, the writer's epoch, the time written)", 1, &stateGetCmd{}},
		{"state ls", "[PREFIX]", "list the state keys, sorted: every key, or PREFIX and the keys below it", 1, &stateLsCmd{}},
		{"state watch", "[--count N] [PREFIX]", "print the current state values, then every change, one line each", 1, &stateWatchCmd{}},
		{"run", "[--node ID] [--ttl D] [--grace D] [--once] [--start-timeout D] [--slots N] -- COMMAND [ARGS...]", "campaign, and run COMMAND while this host leads; exit with its status", maxRunArgs, &runCmd{}},
		{"agent", "[--config FILE] [--check [--other-host] | --cleanup]", "the agent daemon: VIPs, checks, notify commands and a service on the leader, from a YAML file", 0, &agentCmd{}},
		{"maintenance", "on|off --node NODE", "switch an agent's node in or out of maintenance: not ready, so it does not lead", 1, &maintenanceCmd{}},
	}
}

// isGroup reports whether name is a group of commands ("state"), whose
// commands are named with two words ("state get").
func isGroup(name string) bool { return len(groupCommands(name)) > 0 }

// groupCommands returns the commands of group name, without the group's
// word: "get", "ls", "watch" for "state".
func groupCommands(name string) []string {
	var out []string
	for _, c := range commands() {
		if g, sub, ok := strings.Cut(c.name, " "); ok && g == name {
			out = append(out, sub)
		}
	}
	return out
}

// lookup finds a subcommand by name.
func lookup(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// usage prints the help text.
func usage(w io.Writer) {
	fmt.Fprint(w, "go-cluster: operate a go-cluster cluster over NATS\n\nUsage:\n  go-cluster [flags] COMMAND [command flags] [arguments]\n\nCommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %s\n      %s\n", strings.TrimSpace(c.name+" "+c.synopsis), c.summary)
	}
	fmt.Fprint(w, "  version\n      print the version of go-cluster and the commit it was built from (also --version)\n")
	fmt.Fprint(w, "\nFlags (before or after the command):\n")
	o := defaultOptions()
	fs := newFlagSet("go-cluster")
	o.register(fs)
	writeFlags(w, fs)
	fmt.Fprint(w, "\nRun 'go-cluster help COMMAND' (or COMMAND --help) for a command's own flags and an example.\n")
	fmt.Fprint(w, connectionHelp+exitHelp)
}

// connectionHelp says where the connection settings come from.
const connectionHelp = `
Connection: each setting comes from the first of
  1. the flags (--server, --user, --password, --creds, --nkey, --tlscert, --tlskey, --tlsca, --js-domain),
  2. the environment (NATS_URL, NATS_USER, NATS_PASSWORD, NATS_CREDS, NATS_NKEY, NATS_CERT, NATS_KEY, NATS_CA,
     GO_CLUSTER_JS_DOMAIN),
  3. the nats CLI context: --context NAME, else $NATS_CONTEXT, else the one chosen
     with 'nats context select' ($XDG_CONFIG_HOME/nats/context/NAME.json, else ~/.config/nats/...),
and the server defaults to ` + defaultServer + `. Credentials (user and password, creds,
nkey) come together from one of them, as do --tlscert and --tlskey. Behind a
leaf node, --js-domain names the JetStream domain of the cluster's bucket (the
hub's); a context's JetStream domain or API prefix counts too.
`

// exitHelp documents the exit status.
const exitHelp = `
Exit status:
  0  success
  1  an error: NATS cannot be reached, the cluster does not exist, nobody answers,
     a request is refused, a node reports an error, a context cannot be read
  2  bad flags or arguments
  3  status only: the cluster exists but nobody leads (the lease is released,
     deleted, invalid, or was never won); the status is printed all the same
  4  stepdown --to only: that node reports it is not ready (its ReadinessCheck
     has not passed, or failed too often), so it would not take the lease;
     nothing was sent (--force sends all the same)
  5  state get only: the key has no value (never written, or deleted)
  run exits with its command's status (128 + N for signal N), 124 when --start-timeout
  passed before the command started, 127 when the command could not be started
`
