package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// The nats CLI's contexts are read here rather than through
// github.com/nats-io/jsm.go/natscontext (v0.5.1, measured on go1.26):
// that package imports the whole of jsm.go and with it nats-server's
// server package, expr-lang, humanize and yaml.v3, which made this
// binary 8.5 MB larger (18.6 to 27.1 MB; stripped 12.9 to 19.4 MB) and
// linked 81 more packages (306 to 387). It also upgrades modules the rest
// of this module builds against: the antithesis SDK from the no-op build
// nats-server pins to the one that is on by default, x/net,
// prometheus/common and procfs. What go-cluster reads is a JSON file and
// a text file.

// natsContext is what go-cluster reads of a context saved by the nats CLI
// (`nats context save`): CONFIG/nats/context/NAME.json, where CONFIG is
// $XDG_CONFIG_HOME, else ~/.config.
type natsContext struct {
	URL         string `json:"url"`
	User        string `json:"user"`
	Password    string `json:"password"`
	Token       string `json:"token"`
	Creds       string `json:"creds"`
	NKey        string `json:"nkey"`
	Cert        string `json:"cert"`
	Key         string `json:"key"`
	CA          string `json:"ca"`
	TLSFirst    bool   `json:"tls_first"`
	InboxPrefix string `json:"inbox_prefix"`
	JSDomain    string `json:"jetstream_domain"`
	JSAPIPrefix string `json:"jetstream_api_prefix"`

	// Settings go-cluster cannot honour. They authenticate or route, so a
	// context that sets one is refused rather than half used.
	NSC        string `json:"nsc"`
	UserJWT    string `json:"user_jwt"`
	UserSeed   string `json:"user_seed"`
	SocksProxy string `json:"socks_proxy"`
	CertStore  string `json:"windows_cert_store"`
}

// contextRef names a context and says how it was chosen, for messages.
type contextRef struct {
	name string
	how  string // "--context", "NATS_CONTEXT", or the selection file's path
}

// contextStore is the directory of the nats CLI's configuration.
type contextStore struct {
	dir    string // CONFIG/nats
	home   string // for ~ in paths; "" if unknown
	getenv func(string) string
}

// envNATSContext names a context, as with the nats CLI.
const envNATSContext = "NATS_CONTEXT"

// newContextStore finds the configuration directory as the nats CLI does:
// $XDG_CONFIG_HOME/nats, else $HOME/.config/nats.
func newContextStore(getenv func(string) string) (contextStore, error) {
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	s := contextStore{home: home, getenv: getenv}
	switch {
	case getenv("XDG_CONFIG_HOME") != "":
		s.dir = filepath.Join(getenv("XDG_CONFIG_HOME"), "nats")
	case home != "":
		s.dir = filepath.Join(home, ".config", "nats")
	default:
		return s, fmt.Errorf("%w: neither XDG_CONFIG_HOME nor HOME is set", errContext)
	}
	return s, nil
}

// choose returns the context to use: the one named by --context, else by
// NATS_CONTEXT, else the one selected with `nats context select`. ok is
// false when none is.
func (s contextStore) choose(flag string) (ref contextRef, ok bool, err error) {
	switch {
	case flag != "":
		return contextRef{flag, "--context"}, true, nil
	case s.getenv(envNATSContext) != "":
		return contextRef{s.getenv(envNATSContext), envNATSContext}, true, nil
	}
	path := filepath.Join(s.dir, "context.txt")
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return contextRef{}, false, nil
	case err != nil:
		return contextRef{}, false, fmt.Errorf("%w: %v", errContext, err)
	}
	name := strings.TrimSpace(string(data))
	return contextRef{name, "selected in " + path}, name != "", nil
}

// load reads a context and expands ~ and $VAR in its file paths.
func (s contextStore) load(ref contextRef) (natsContext, error) {
	var c natsContext
	if err := validContextName(ref.name); err != nil {
		return c, fmt.Errorf("%w %q (%s): %v", errContext, ref.name, ref.how, err)
	}
	path := filepath.Join(s.dir, "context", ref.name+".json")
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, fmt.Errorf("%w %q (%s): no such context: %s does not exist (see `nats context ls`)", errContext, ref.name, ref.how, path)
	}
	if err != nil {
		return c, fmt.Errorf("%w %q: %v", errContext, ref.name, err)
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return c, fmt.Errorf("%w %q: %s: %v", errContext, ref.name, path, err)
	}
	if err := c.expand(s); err != nil {
		return c, fmt.Errorf("%w %q: %s: %v", errContext, ref.name, path, err)
	}
	return c, nil
}

// validContextName refuses names that would leave the context directory,
// as natscontext.ValidateName does.
func validContextName(name string) error {
	switch {
	case name == "":
		return errors.New("empty name")
	case strings.Contains(name, ".."):
		return errors.New(`name contains ".."`)
	case strings.ContainsAny(name, `/\`):
		return errors.New(`name contains "/" or "\"`)
	}
	return nil
}

// expand resolves the references in c the way the nats CLI does for the
// schemes go-cluster supports: ~ and $VAR in file paths, file:// paths,
// and env://NAME for the password and the token.
func (c *natsContext) expand(s contextStore) error {
	for _, f := range []struct{ name, value string }{
		{"nsc", c.NSC}, {"user_jwt", c.UserJWT}, {"user_seed", c.UserSeed},
		{"socks_proxy", c.SocksProxy}, {"windows_cert_store", c.CertStore},
	} {
		if f.value != "" {
			return fmt.Errorf("%q is not supported by go-cluster (use creds, nkey, or user and password)", f.name)
		}
	}
	for _, f := range []struct {
		name  string
		value *string
	}{{"creds", &c.Creds}, {"nkey", &c.NKey}, {"cert", &c.Cert}, {"key", &c.Key}, {"ca", &c.CA}} {
		p, err := s.path(f.name, *f.value)
		if err != nil {
			return err
		}
		*f.value = p
	}
	for _, f := range []struct {
		name  string
		value *string
	}{{"password", &c.Password}, {"token", &c.Token}} {
		v, err := s.literal(f.name, *f.value)
		if err != nil {
			return err
		}
		*f.value = v
	}
	return nil
}

// scheme returns the URI scheme of a reference, "" for a plain value (a
// one-letter scheme is a Windows drive).
func scheme(ref string) string {
	u, err := url.Parse(ref)
	if err != nil || len(u.Scheme) < 2 {
		return ""
	}
	return u.Scheme
}

// path resolves a file reference: a path, or file://PATH, with $VAR and a
// leading ~ expanded.
func (s contextStore) path(field, ref string) (string, error) {
	switch sc := scheme(ref); sc {
	case "":
	case "file":
		ref = strings.TrimPrefix(ref, "file://")
	default:
		return "", fmt.Errorf("%s: %s:// references are not supported by go-cluster (use a file path)", field, sc)
	}
	ref = os.Expand(ref, s.getenv)
	if strings.HasPrefix(ref, "~") && s.home != "" {
		ref = s.home + ref[1:]
	}
	return ref, nil
}

// literal resolves a secret: env://NAME reads the variable NAME; other
// values are the secret itself.
func (s contextStore) literal(field, ref string) (string, error) {
	switch sc := scheme(ref); sc {
	case "env":
		name := strings.TrimPrefix(ref, "env://")
		v := s.getenv(name)
		if v == "" {
			return "", fmt.Errorf("%s: environment variable %q is not set", field, name)
		}
		return v, nil
	case "op", "nsc", "data":
		return "", fmt.Errorf("%s: %s: references are not supported by go-cluster", field, sc)
	}
	return ref, nil
}

// agentContext chooses the context of an agent's cluster: the one named
// (name: --context, else the file's context; else NATS_CONTEXT), else
// the selected one, but only when no source names a server. A file that
// names its servers does not depend on what a user selected with `nats
// context select`, which may not even be readable by the user the agent
// or its --check runs as (HOME of another user, say).
func agentContext(name string, sources []connSource, getenv func(string) string) (chosenContext, error) {
	if name == "" && getenv(envNATSContext) == "" {
		for _, src := range sources {
			if src.server != "" {
				return chosenContext{}, nil
			}
		}
	}
	return chooseContext(name, getenv)
}
