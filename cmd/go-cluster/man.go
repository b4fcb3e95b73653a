package main

// The man page, go-cluster(1), made from the help text itself: the
// commands' synopses, what each does, their flags and examples, the
// common flags, the connection rules and the exit status. The .deb ships
// it (packaging/build-deb.sh runs `go-cluster help --man`).
//
// Written here rather than with a library: cobra/doc generates pages
// from cobra commands only, and this CLI is pflag; go-md2man would need
// a Markdown copy of the text and a module of its own, for the dozen
// man(7) macros below.

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

// manPage writes go-cluster.1 in man(7) roff.
func manPage(w io.Writer) {
	fmt.Fprint(w, `.TH GO-CLUSTER 1 "" "go-cluster" "User Commands"
.SH NAME
go-cluster \- operate a go-cluster cluster over NATS; run a command or an agent on its leader
.SH SYNOPSIS
.B go-cluster
[\fIflags\fR] \fICOMMAND\fR [\fIcommand flags\fR] [\fIarguments\fR]
.br
.B go-cluster help
[\fICOMMAND\fR]
.SH DESCRIPTION
go-cluster shows who leads a go-cluster cluster, streams leadership changes, asks the leader
to step down, queries the nodes' health, reads the cluster's fenced state and creates its
bucket ahead of time.
.B go-cluster run
runs one command on one host at a time, and
.B go-cluster agent
holds virtual IPs and runs notify commands and a service on the leader, as keepalived does.
Flags go before or after the command; long flags take two dashes, as with the nats CLI.
.B go-cluster help
.I COMMAND
(or
.I COMMAND
.BR \-\-help )
prints one command's help.
.SH COMMANDS
`)
	for _, c := range commands() {
		h := commandHelps()[c.name]
		fmt.Fprintf(w, ".SS %s\n", roffText("go-cluster "+strings.TrimSpace(c.name+" "+c.synopsis)))
		fmt.Fprintf(w, "%s\n", roffText(h.about))
		fs := newFlagSet(c.name)
		c.impl.define(fs)
		manFlags(w, fs)
		if len(h.common) > 0 {
			fmt.Fprintf(w, ".PP\nIt reads the common flags %s and the connection flags.\n", roffText("--"+strings.Join(h.common, ", --")))
		}
		for _, e := range h.examples {
			fmt.Fprintf(w, ".PP\n%s:\n.PP\n.RS 4\n.nf\n%s\n.fi\n.RE\n", roffText(capitalize(e.what)), roffText(e.line))
		}
		if h.exit != "" {
			fmt.Fprintf(w, ".PP\nExit status: %s.\n", roffText(h.exit))
		}
	}
	fmt.Fprint(w, ".SS go-cluster version\nPrint the version of go-cluster and the commit it was built from (also \\-\\-version).\n")
	fmt.Fprint(w, ".SH OPTIONS\nThe common flags, before or after the command:\n")
	o := defaultOptions()
	fs := newFlagSet("go-cluster")
	o.register(fs)
	manFlags(w, fs)
	fmt.Fprintf(w, ".SH CONNECTION\n.nf\n%s\n.fi\n", roffText(dedent(strings.Replace(connectionHelp, "Connection: each", "Each", 1))))
	fmt.Fprintf(w, ".SH \"EXIT STATUS\"\n.nf\n%s\n.fi\n", roffText(dedent(strings.Replace(exitHelp, "Exit status:", "", 1))))
	fmt.Fprint(w, `.SH FILES
.TP
.I /etc/go-cluster/agent.yaml
the agent's configuration file (\-\-config, $GO_CLUSTER_CONFIG)
.TP
.I /lib/systemd/system/go-cluster-agent.service
the agent's systemd unit
.SH "SEE ALSO"
.BR nats (1),
.BR keepalived (8),
/usr/share/doc/go-cluster/agent.md
`)
}

// manFlags writes fs's flags as tagged paragraphs.
func manFlags(w io.Writer, fs *pflag.FlagSet) {
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		left, text := flagLine(f)
		fmt.Fprintf(w, ".TP\n.B %s\n%s\n", roffText(strings.TrimSpace(left)), roffText(text))
	})
}

// dedent is s without its blank lines at either end and without the two
// spaces the help text indents lines with.
func dedent(s string) string {
	lines := strings.Split(strings.Trim(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, "  ")
	}
	return strings.Join(lines, "\n")
}

// roffText escapes s for roff: backslashes, dashes (so that flags print
// as hyphen-minus), and a line starting with a control character.
func roffText(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			lines[i] = `\&` + l
		}
	}
	return strings.Join(lines, "\n")
}

// capitalize is s with its first letter upper case.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
