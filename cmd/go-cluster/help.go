package main

// A command's own help (go-cluster COMMAND --help, go-cluster help
// COMMAND): its usage, what it does, its own flags, the common flags it
// reads, an example and its exit status, in 40 lines or fewer, the way
// `nats` and `consul lock -h` show a command. The whole list is
// `go-cluster help`; the man page (man.go) is made from the same text.

import (
	"cmp"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

// helpWidth is the width help text is wrapped to.
const helpWidth = 80

// example is one example of a command: what it does, and the line.
type example struct{ what, line string }

// commandHelp is what a command's help says beyond its synopsis and
// flags.
type commandHelp struct {
	usage    string    // the usage after the command's name, when not its synopsis
	about    string    // what the command does: a paragraph
	common   []string  // the common flags it reads, listed in full (the connection flags are always named in one line)
	examples []example // at least one
	exit     string    // its exit status, when it has one of its own
}

// requestFlags are the common flags of the commands that ask NATS and
// wait for replies.
func requestFlags() []string { return []string{"cluster", "timeout", "json"} }

// commandHelps is each command's help, by name.
func commandHelps() map[string]commandHelp {
	return map[string]commandHelp{
		"status": {
			about:    "Show who leads, since when and with which epoch, the lease, and every member with its role and health.",
			common:   requestFlags(),
			examples: []example{{"the leader and the members", "go-cluster --cluster orders status"}},
			exit:     "0 a leader, 3 nobody leads (the status is printed all the same), 1 an error, 2 bad flags",
		},
		"watch": {
			about:    "Stream leadership changes as they are written to the lease, one line each, until interrupted.",
			common:   requestFlags(),
			examples: []example{{"every change, renewals too", "go-cluster --cluster orders watch --all"}},
		},
		"stepdown": {
			about:    "Ask the leader to step down, optionally in favour of NODE; wait for the new leader and print it.",
			common:   requestFlags(),
			examples: []example{{"hand over to db2 before db1's maintenance", "go-cluster --cluster orders stepdown --to db2"}},
			exit:     "0 done, 4 the node of --to is not ready (nothing sent), 1 an error, 2 bad flags",
		},
		"health": {
			about:    "Show the health of one node, or of every node: role, readiness and the reason.",
			common:   requestFlags(),
			examples: []example{{"every node", "go-cluster --cluster orders health"}},
		},
		"init": {
			about: "Create the cluster's bucket ahead of time with the library's settings (the first election can then start " +
				"once its TTL ceiling has passed); change its LeaseTTL, its epoch base after a restore, or its protocol.",
			common:   requestFlags(),
			examples: []example{{"a three-replica bucket on a JetStream cluster", "go-cluster --cluster orders init --replicas 3"}},
		},
		"state get": {
			about:    "Print the value of a state key the leader wrote (--json: with its revision, the writer's epoch, the time written).",
			common:   requestFlags(),
			examples: []example{{"one key", "go-cluster --cluster orders state get config.primary"}},
			exit:     "0 printed, 5 the key has no value, 1 an error, 2 bad flags",
		},
		"state ls": {
			about:    "List the state keys, sorted: every key, or PREFIX and the keys below it.",
			common:   requestFlags(),
			examples: []example{{"the keys under orders", "go-cluster --cluster orders state ls orders"}},
		},
		"state watch": {
			about:    "Print the current state values, then every change, one line each.",
			common:   requestFlags(),
			examples: []example{{"follow the keys under orders", "go-cluster --cluster orders state watch orders"}},
		},
		"run": {
			usage: "--cluster ID [flags] -- COMMAND [ARGS...]",
			about: "Run COMMAND while this process leads the cluster: on one host at a time (--slots N: N at a time), " +
				"as consul lock does. Leadership lost, COMMAND gets SIGTERM, SIGKILL after --grace, and run campaigns again.",
			common: []string{"cluster"},
			examples: []example{
				{"the nightly backup, on one host of three", "go-cluster run --cluster backup --once -- /usr/local/bin/backup.sh"},
				{"give up if it has not started within 30s", "go-cluster run --cluster migrate --start-timeout 30s -- ./migrate up"},
			},
			exit: "COMMAND's (128+N for signal N), 124 --start-timeout passed, 127 COMMAND could not start, 1 an error, 2 bad flags",
		},
		"agent": {
			about: "The agent daemon, keepalived's kind: for each cluster of its YAML file, campaign while its checks pass, " +
				"and on the leader hold the VIPs, run the notify commands and the service. It serves /healthz, /livez, " +
				"/readyz and /metrics on --listen. The connection flags override every cluster's connection; " +
				"clusters whose connections resolve alike share one. See docs/agent.md.",
			examples: []example{
				{"check a file, then run it", "go-cluster agent --check --config /etc/go-cluster/agent.yaml && go-cluster agent"},
				{"what systemd runs after a stop", "go-cluster agent --cleanup"},
			},
			exit: "0 stopped cleanly (--check: valid), 1 an error (--check: invalid), 2 bad flags",
		},
		"maintenance": {
			about:    "Switch an agent's node into maintenance (not ready: it hands over and does not lead) or out of it.",
			common:   []string{"cluster", "timeout"},
			examples: []example{{"take db1 out before working on it", "go-cluster --cluster orders maintenance on --node db1"}},
		},
	}
}

// connectionFlagNames are the connection flags, named in one line in a
// command's help.
const connectionFlagNames = "--server, --context, --user, --password, --creds, --nkey, --tlscert, --tlskey, --tlsca, --js-domain"

// commandUsage prints c's help.
func commandUsage(w io.Writer, c command) {
	h := commandHelps()[c.name]
	fmt.Fprint(w, wrap("Usage: go-cluster "+strings.TrimSpace(c.name+" "+cmp.Or(h.usage, c.synopsis)), helpWidth, "         ", ""))
	fmt.Fprint(w, "\n"+wrap(h.about, helpWidth, "")+"\nFlags:\n")
	fs := newFlagSet(c.name)
	c.impl.define(fs)
	writeFlags(w, fs)
	if len(h.common) > 0 {
		o := defaultOptions()
		common := newFlagSet("go-cluster")
		o.register(common)
		keep := newFlagSet("common")
		for _, n := range h.common {
			keep.AddFlag(common.Lookup(n))
		}
		writeFlags(w, keep)
	}
	fmt.Fprint(w, wrap("Connection, as the nats CLI's: "+connectionFlagNames+" (see 'go-cluster help').", helpWidth, "  ", ""))
	fmt.Fprint(w, "\nExample:\n")
	for _, e := range h.examples {
		fmt.Fprintf(w, "  # %s\n  %s\n", e.what, e.line)
	}
	if h.exit != "" {
		fmt.Fprint(w, "\n"+wrap("Exit status: "+h.exit+".", helpWidth, "  ", ""))
	}
}

// groupUsage prints the help of every command of group name, short: the
// usage line and what it does.
func groupUsage(w io.Writer, name string) {
	fmt.Fprintf(w, "Usage: go-cluster %s COMMAND [flags] [arguments]\n\nCommands:\n", name)
	for _, c := range commands() {
		if g, _, _ := strings.Cut(c.name, " "); g == name {
			fmt.Fprintf(w, "  %s\n%s", strings.TrimSpace(c.name+" "+c.synopsis), wrap(commandHelps()[c.name].about, helpWidth-6, "      ", "      "))
		}
	}
	fmt.Fprintf(w, "\nRun 'go-cluster help %s COMMAND' for a command's flags and an example.\n", name)
}

// flagColumn is the width of the flags' names in help text.
const flagColumn = 25

// writeFlags prints fs's flags, one each, the text wrapped beside the
// names: "  -n, --slots N           at most N ...".
func writeFlags(w io.Writer, fs *pflag.FlagSet) {
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		left, text := flagLine(f)
		if len(left) >= flagColumn-1 {
			fmt.Fprintf(w, "%s\n%s", left, wrap(text, helpWidth, strings.Repeat(" ", flagColumn)))
			return
		}
		fmt.Fprint(w, wrap(text, helpWidth, strings.Repeat(" ", flagColumn), left+strings.Repeat(" ", flagColumn-len(left))))
	})
}

// flagLine is a flag's names with its value's placeholder ("  -n, --slots
// N"), and its text with its default.
func flagLine(f *pflag.Flag) (left, text string) {
	placeholder, text := pflag.UnquoteUsage(f)
	if f.Value.Type() == "bool" {
		placeholder = ""
	} else if placeholder == "duration" {
		placeholder = "D"
	} else if placeholder == "int" {
		placeholder = "N"
	}
	left = "      --" + f.Name
	if f.Shorthand != "" {
		left = "  -" + f.Shorthand + ", --" + f.Name
	}
	if placeholder != "" {
		left += " " + placeholder
	}
	switch f.DefValue {
	case "", "0", "0s", "false", "[]":
	default:
		if !strings.Contains(text, "(default") {
			text += " (default " + f.DefValue + ")"
		}
	}
	return left, text
}

// wrap breaks s into lines of at most width, the first starting with
// first (indent if not given), the others with indent; it ends with a
// newline.
func wrap(s string, width int, indent string, first ...string) string {
	var b strings.Builder
	line := indent
	if len(first) > 0 {
		line = first[0]
	}
	start := len(line)
	for _, word := range strings.Fields(s) {
		if len(line) > start && len(line)+1+len(word) > width {
			b.WriteString(strings.TrimRight(line, " ") + "\n")
			line, start = indent, len(indent)
		}
		if len(line) > start {
			line += " "
		}
		line += word
	}
	b.WriteString(line + "\n")
	return b.String()
}
