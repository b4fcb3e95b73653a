package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/wire"
	"github.com/spf13/pflag"
)

// Defaults of the common flags.
const (
	defaultServer  = "nats://127.0.0.1:4222"
	defaultTimeout = 2 * time.Second
	envNATSURL     = "NATS_URL"
)

// options are the flags every command takes.
type options struct {
	conn    connFlags     // how to reach NATS, before the environment and the context
	cluster string        // the cluster's ID
	timeout time.Duration // per request, and for gathering replies
	json    bool          // JSON output
	// timeoutGiven: --timeout was on the command line (run refuses it).
	timeoutGiven bool
}

// connFlags are the connection flags, named as in the nats CLI; "" when
// not given.
type connFlags struct {
	context  string // a nats CLI context
	server   string // comma-separated NATS URLs
	user     string
	password string
	creds    string // a .creds file
	nkey     string // an NKey seed file
	tlsCert  string
	tlsKey   string
	tlsCA    string
	jsDomain string // the JetStream domain of the bucket
}

// defaultOptions are the options before any flag.
func defaultOptions() options {
	return options{timeout: defaultTimeout}
}

// register adds the common flags to fs, with o's current values as
// defaults, so that a flag given before the command keeps its value when
// the command's own flags are parsed.
func (o *options) register(fs *pflag.FlagSet) {
	c := &o.conn
	fs.StringVarP(&c.server, "server", "s", c.server, "NATS server `URLS`, comma-separated (default $"+envNATSURL+", else the context's, else "+defaultServer+")")
	fs.StringVar(&c.context, "context", c.context, "use the nats CLI's saved context `NAME` (default $"+envNATSContext+", else the selected one)")
	fs.StringVar(&c.user, "user", c.user, "user `NAME` ($"+envNATSUser+")")
	fs.StringVar(&c.password, "password", c.password, "`PASSWORD` of --user ($"+envNATSPassword+")")
	fs.StringVar(&c.creds, "creds", c.creds, "NATS credentials `FILE` (.creds) ($"+envNATSCreds+")")
	fs.StringVar(&c.nkey, "nkey", c.nkey, "NKey seed `FILE` ($"+envNATSNKey+")")
	fs.StringVar(&c.tlsCert, "tlscert", c.tlsCert, "TLS client certificate `FILE` ($"+envNATSCert+")")
	fs.StringVar(&c.tlsKey, "tlskey", c.tlsKey, "TLS client key `FILE` ($"+envNATSKey+")")
	fs.StringVar(&c.tlsCA, "tlsca", c.tlsCA, "TLS CA certificates `FILE` to trust ($"+envNATSCA+")")
	fs.StringVar(&c.jsDomain, "js-domain", c.jsDomain, "JetStream `DOMAIN` of the cluster's bucket, through a leaf node ($"+envJSDomain+", else the context's)")
	fs.StringVar(&o.cluster, "cluster", o.cluster, "the cluster's `ID` (required)")
	fs.DurationVar(&o.timeout, "timeout", o.timeout, "how long to wait for NATS and for replies (not run's: its wait is --start-timeout)")
	fs.BoolVar(&o.json, "json", o.json, "print JSON")
}

// check validates the options a command needs.
func (o *options) check() error {
	if o.cluster == "" {
		return fmt.Errorf("%w: --cluster is required", errUsage)
	}
	if err := wire.CheckIdentifier("--cluster", o.cluster); err != nil {
		return badIdentifier(err)
	}
	if o.timeout <= 0 {
		return fmt.Errorf("%w: --timeout must be positive, not %v", errUsage, o.timeout)
	}
	return nil
}

// checkGiven refuses connection flags given with an empty value: an empty
// --server would otherwise quietly fall back to NATS_URL or the context.
func checkGiven(fss ...*pflag.FlagSet) error {
	var err error
	for _, fs := range fss {
		fs.Visit(func(f *pflag.Flag) {
			switch f.Name {
			case "server", "context", "user", "creds", "nkey", "tlscert", "tlskey", "tlsca", "js-domain":
				if err == nil && strings.TrimSpace(f.Value.String()) == "" {
					err = fmt.Errorf("%w: --%s is empty", errUsage, f.Name)
				}
			}
		})
	}
	return err
}

// invocation is a parsed command line.
type invocation struct {
	opts    options
	cmd     command
	args    []string // the command's positional arguments
	help    bool     // -h or help: print usage (cmd's, group's, or the whole) and exit 0
	group   string   // help of this group of commands ("state")
	man     bool     // help --man: print the man page
	version bool     // --version or version: print the version and exit 0
}

// parse reads a command line: [flags] COMMAND [flags and arguments, in any
// order]. Errors wrap errUsage.
func parse(args []string) (invocation, error) {
	inv := invocation{opts: defaultOptions()}
	global := newFlagSet("go-cluster")
	global.SetInterspersed(false) // the first argument that is no flag is the command
	inv.opts.register(global)
	// Before the command only: it is no command's flag.
	global.BoolVar(&inv.version, "version", false, "print the version and exit")
	if err := global.Parse(longDashes(global, args)); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			inv.help = true
			return inv, nil
		}
		return inv, fmt.Errorf("%w: %v", errUsage, err)
	}
	rest := global.Args()
	if inv.version { // whatever follows, as git --version does
		return inv, nil
	}
	if len(rest) == 0 {
		return inv, fmt.Errorf("%w: no command given", errUsage)
	}
	switch rest[0] {
	case "help":
		return helpTarget(inv, rest[1:])
	case "version":
		if len(rest) > 1 {
			return inv, fmt.Errorf("%w: version: unexpected argument %q (usage: go-cluster version)", errUsage, rest[1])
		}
		inv.version = true
		return inv, nil
	}
	if isGroup(rest[0]) && (len(rest) == 1 || rest[1] == "-h" || rest[1] == "--help") {
		if len(rest) == 1 {
			return inv, fmt.Errorf("%w: %s needs a command right after it: %s", errUsage, rest[0], strings.Join(groupCommands(rest[0]), ", "))
		}
		inv.help, inv.group = true, rest[0]
		return inv, nil
	}
	name, rest, err := commandName(rest)
	if err != nil {
		return inv, err
	}
	cmd, ok := lookup(name)
	if !ok {
		return inv, fmt.Errorf("%w: unknown command %q", errUsage, name)
	}
	inv.cmd = cmd
	fs := newFlagSet("go-cluster " + cmd.name)
	inv.opts.register(fs)
	cmd.impl.define(fs)
	if err := fs.Parse(longDashes(fs, rest)); err != nil { // flags anywhere among the arguments, as the nats CLI takes them; "--" ends them
		if errors.Is(err, pflag.ErrHelp) {
			inv.help = true
			return inv, nil
		}
		return inv, fmt.Errorf("%w: %s: %v", errUsage, cmd.name, err)
	}
	pos := fs.Args()
	if len(pos) > cmd.maxArgs {
		return inv, fmt.Errorf("%w: %s: unexpected argument %q (usage: go-cluster %s %s)", errUsage, cmd.name, pos[cmd.maxArgs], cmd.name, cmd.synopsis)
	}
	inv.args = pos
	if err := checkGiven(global, fs); err != nil {
		return inv, err
	}
	inv.opts.timeoutGiven = global.Changed("timeout") || fs.Changed("timeout")
	if inv.opts.timeoutGiven && cmd.name == "run" {
		// One flag, one meaning: --timeout is how long a request waits;
		// run waits for no reply, and its own wait is --start-timeout.
		return inv, fmt.Errorf("%w: run takes no --timeout: give up if COMMAND has not started with --start-timeout D", errUsage)
	}
	opts := inv.opts
	if _, ok := cmd.impl.(clusterFree); ok && opts.cluster == "" {
		opts.cluster = "unused" // its clusters come from elsewhere
	}
	if err := opts.check(); err != nil {
		return inv, err
	}
	return inv, nil
}

// helpTarget reads what follows help: nothing (the whole help), a
// command ("run", "state get"), a group ("state"), or --man (the man
// page, for packaging).
func helpTarget(inv invocation, args []string) (invocation, error) {
	inv.help = true
	switch {
	case len(args) == 0:
		return inv, nil
	case len(args) == 1 && args[0] == "--man":
		inv.man = true
		return inv, nil
	case len(args) == 1 && isGroup(args[0]):
		inv.group = args[0]
		return inv, nil
	}
	name := strings.Join(args, " ")
	cmd, ok := lookup(name)
	if !ok {
		return inv, fmt.Errorf("%w: help: unknown command %q", errUsage, name)
	}
	inv.cmd = cmd
	return inv, nil
}

// commandName takes the command's name off the front of args: one word,
// or two for a command of a group ("state get"). It returns the arguments
// after the name.
func commandName(args []string) (string, []string, error) {
	name := args[0]
	if !isGroup(name) {
		return name, args[1:], nil
	}
	if len(args) < 2 || strings.HasPrefix(args[1], "-") {
		return "", nil, fmt.Errorf("%w: %s needs a command right after it: %s", errUsage, name, strings.Join(groupCommands(name), ", "))
	}
	return name + " " + args[1], args[2:], nil
}

// longDashes gives a long flag written with one dash (-cluster, as the
// standard library's flag package took it, and so did this command) its
// second dash, up to "--": pflag reads -cluster as -c -l -u ...
func longDashes(fs *pflag.FlagSet, args []string) []string {
	out := slices.Clone(args)
	for i, a := range out {
		if a == "--" {
			break
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "-"), "=")
		if len(a) > 2 && a[0] == '-' && a[1] != '-' && len(name) > 1 && fs.Lookup(name) != nil {
			out[i] = "-" + a
		}
	}
	return out
}

// newFlagSet returns a flag set that reports errors to its caller and
// prints nothing itself. pflag rather than the nats CLI's fisk, kong,
// urfave/cli or cobra: it adds no module but itself and 0.1 MB to the
// binary (fisk, kong and urfave/cli 5 to 6 MB; cobra 0.4 MB and five
// modules), and it has the standard library's API, so the commands keep
// their flag definitions and this file its parse.
func newFlagSet(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// badIdentifier turns an error of wire.CheckIdentifier or
// wire.CheckNodeID into a usage
// error, without the library's "invalid config" prefix.
func badIdentifier(err error) error {
	return fmt.Errorf("%w: %s", errUsage, strings.TrimPrefix(err.Error(), cluster.ErrInvalidConfig.Error()+": "))
}
