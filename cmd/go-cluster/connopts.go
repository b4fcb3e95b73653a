package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
)

// connSource is one place connection settings come from: the flags, the
// environment, or a nats CLI context. "" means not set there.
type connSource struct {
	name                         string // for messages: "flags", "environment", `context "prod"`
	server                       string
	user, password, token        string
	creds, nkey                  string
	tlsCert, tlsKey, tlsCA       string
	tlsFirst                     bool
	inboxPrefix, jsDomain, jsAPI string
}

// hasAuth reports whether the source sets any credential.
func (s connSource) hasAuth() bool {
	return s.user != "" || s.password != "" || s.token != "" || s.creds != "" || s.nkey != ""
}

// connSettings are the settings a connection is made with, each from the
// first source that sets it.
type connSettings struct {
	server, serverFrom string
	auth               connSource // the source of the credentials: its user, password, token, creds and nkey
	tlsCert, tlsKey    string
	tlsCA              string
	tlsFirst           bool
	inboxPrefix        string
	jsDomain, jsAPI    string
	context            string // the context's name, "" if none was used
}

// Environment variables of the nats CLI that go-cluster reads too.
const (
	envNATSUser     = "NATS_USER"
	envNATSPassword = "NATS_PASSWORD"
	envNATSCreds    = "NATS_CREDS"
	envNATSNKey     = "NATS_NKEY"
	envNATSCert     = "NATS_CERT"
	envNATSKey      = "NATS_KEY"
	envNATSCA       = "NATS_CA"
)

// envJSDomain is go-cluster's own variable for --js-domain.
const envJSDomain = "GO_CLUSTER_JS_DOMAIN"

// flagSource is the connection flags as a source.
func flagSource(f connFlags) connSource {
	return connSource{
		name: "flags", server: f.server, user: f.user, password: f.password,
		creds: f.creds, nkey: f.nkey, tlsCert: f.tlsCert, tlsKey: f.tlsKey, tlsCA: f.tlsCA, jsDomain: f.jsDomain,
	}
}

// envSource is the environment variables as a source: the nats CLI's,
// and GO_CLUSTER_JS_DOMAIN.
func envSource(getenv func(string) string) connSource {
	get := func(k string) string { return strings.TrimSpace(getenv(k)) }
	return connSource{
		name: "environment", server: get(envNATSURL), user: get(envNATSUser), password: getenv(envNATSPassword),
		creds: get(envNATSCreds), nkey: get(envNATSNKey), tlsCert: get(envNATSCert), tlsKey: get(envNATSKey), tlsCA: get(envNATSCA),
		jsDomain: get(envJSDomain),
	}
}

// contextSource is a nats CLI context as a source.
func contextSource(name string, c natsContext) connSource {
	return connSource{
		name: fmt.Sprintf("context %q", name), server: c.URL, user: c.User, password: c.Password, token: c.Token,
		creds: c.Creds, nkey: c.NKey, tlsCert: c.Cert, tlsKey: c.Key, tlsCA: c.CA, tlsFirst: c.TLSFirst,
		inboxPrefix: c.InboxPrefix, jsDomain: c.JSDomain, jsAPI: c.JSAPIPrefix,
	}
}

// resolveConn merges the flags, the environment and the chosen nats CLI
// context, in that order of precedence: each setting comes from the first
// that sets it. The credentials (user and password, token, creds, nkey)
// and the client certificate with its key are taken as a whole from one
// source, so that a --creds flag replaces a context's user and password
// rather than mixing with them.
func resolveConn(f connFlags, getenv func(string) string) (connSettings, error) {
	sources := []connSource{flagSource(f), envSource(getenv)}
	ref, err := chooseContext(f.context, getenv)
	if err != nil {
		return connSettings{}, err
	}
	if ref.name != "" {
		c, err := ref.store.load(ref.contextRef)
		if err != nil {
			return connSettings{}, err
		}
		sources = append(sources, contextSource(ref.name, c))
	}
	return merge(sources, ref.name)
}

// chosenContext is the context to read, and where it is stored; its name
// is "" when there is none.
type chosenContext struct {
	contextRef
	store contextStore
}

// chooseContext finds the context named by --context or NATS_CONTEXT, or
// selected. Without a configuration directory only a named one is an
// error: nothing can be selected there.
func chooseContext(flag string, getenv func(string) string) (chosenContext, error) {
	store, err := newContextStore(getenv)
	if err != nil {
		if flag != "" || getenv(envNATSContext) != "" {
			return chosenContext{}, err
		}
		return chosenContext{}, nil
	}
	ref, ok, err := store.choose(flag)
	if err != nil || !ok {
		return chosenContext{}, err
	}
	return chosenContext{ref, store}, nil
}

// merge takes each setting from the first source that sets it, and checks
// that the result can make a connection.
func merge(sources []connSource, contextName string) (connSettings, error) {
	s := connSettings{server: defaultServer, serverFrom: "default", context: contextName}
	authSet, certSet := false, false
	for _, src := range sources {
		if s.serverFrom == "default" && src.server != "" {
			s.server, s.serverFrom = src.server, src.name
		}
		if !authSet && src.hasAuth() {
			s.auth, authSet = src, true
		}
		if !certSet && (src.tlsCert != "" || src.tlsKey != "") {
			s.tlsCert, s.tlsKey, certSet = src.tlsCert, src.tlsKey, true
			if src.tlsCert == "" || src.tlsKey == "" {
				return s, fmt.Errorf("%w: a client certificate needs both --tlscert and --tlskey (%s sets only one)", errUsage, src.name)
			}
		}
		if s.tlsCA == "" {
			s.tlsCA = src.tlsCA
		}
		s.tlsFirst = s.tlsFirst || src.tlsFirst
		if s.inboxPrefix == "" {
			s.inboxPrefix = src.inboxPrefix
		}
		if s.jsDomain == "" && s.jsAPI == "" {
			s.jsDomain, s.jsAPI = src.jsDomain, src.jsAPI
		}
	}
	a := s.auth
	methods := 0
	for _, set := range []bool{a.user != "" || a.password != "", a.token != "", a.creds != "", a.nkey != ""} {
		if set {
			methods++
		}
	}
	switch {
	case methods > 1:
		return s, fmt.Errorf("%w: %s set more than one of user/password, token, creds and nkey: use one", errUsage, a.name)
	case a.password != "" && a.user == "":
		return s, fmt.Errorf("%w: a password without a user (%s)", errUsage, a.name)
	}
	return s, nil
}

// natsOptions are the nats.go options of the settings.
func (s connSettings) natsOptions() ([]nats.Option, error) {
	var opts []nats.Option
	a := s.auth
	switch {
	case a.user != "":
		opts = append(opts, nats.UserInfo(a.user, a.password))
	case a.token != "":
		opts = append(opts, nats.Token(a.token))
	case a.creds != "":
		opts = append(opts, nats.UserCredentials(a.creds))
	case a.nkey != "":
		opt, err := nats.NkeyOptionFromSeed(a.nkey)
		if err != nil {
			return nil, fmt.Errorf("%w: nkey seed %s (from %s): %v", errConnect, a.nkey, a.name, err)
		}
		opts = append(opts, opt)
	}
	if s.tlsCert != "" {
		opts = append(opts, nats.ClientCert(s.tlsCert, s.tlsKey))
	}
	if s.tlsCA != "" {
		opts = append(opts, nats.RootCAs(s.tlsCA))
	}
	if s.tlsFirst {
		opts = append(opts, nats.TLSHandshakeFirst())
	}
	if s.inboxPrefix != "" {
		opts = append(opts, nats.CustomInboxPrefix(s.inboxPrefix))
	}
	return opts, nil
}

// key stands for the settings natsOptions and the server make a
// connection of: equal keys, equal connections (the agent's clusters share
// one). The JetStream domain and API prefix are no part of it: each node
// is given its own. A hash, so that no secret is kept in it.
func (s connSettings) key() string {
	a := s.auth
	h := sha256.New()
	for _, f := range []string{s.server, a.user, a.password, a.token, a.creds, a.nkey,
		s.tlsCert, s.tlsKey, s.tlsCA, strconv.FormatBool(s.tlsFirst), s.inboxPrefix} {
		h.Write([]byte(f))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// describe says where the server came from, for error messages.
func (s connSettings) describe() string {
	switch s.serverFrom {
	case "flags":
		return s.server
	case "environment":
		return s.server + " (from " + envNATSURL + ")"
	case "default":
		return s.server + " (the default: set --server, " + envNATSURL + " or --context)"
	default:
		return s.server + " (from " + s.serverFrom + ")"
	}
}
