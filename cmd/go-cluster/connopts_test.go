package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeContext saves a nats CLI context NAME with the given JSON under
// config (what XDG_CONFIG_HOME names), and selects it when selected.
func writeContext(t *testing.T, config, name, body string, selected bool) {
	t.Helper()
	dir := filepath.Join(config, "nats", "context")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".json"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if selected {
		if err := os.WriteFile(filepath.Join(config, "nats", "context.txt"), []byte(name+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func TestResolveConnPrecedence(t *testing.T) {
	t.Parallel()
	config := t.TempDir()
	writeContext(t, config, "prod", `{"description":"prod","url":"nats://ctx:4222","user":"cu","password":"cp",
		"cert":"~/c.pem","key":"$CERTS/k.pem","ca":"file:///etc/ca.pem","inbox_prefix":"_I.ops","jetstream_domain":"hub","color_scheme":"dark"}`, true)
	writeContext(t, config, "other", `{"url":"nats://other:4222","creds":"/o.creds"}`, false)
	base := map[string]string{"XDG_CONFIG_HOME": config, "HOME": "/home/op", "CERTS": "/certs"}
	with := func(extra map[string]string) func(string) string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return getenvOf(m)
	}

	// The selected context alone.
	s, err := resolveConn(connFlags{}, with(nil))
	if err != nil {
		t.Fatal(err)
	}
	if s.server != "nats://ctx:4222" || s.serverFrom != `context "prod"` || s.context != "prod" ||
		s.auth.user != "cu" || s.auth.password != "cp" || s.tlsCert != "/home/op/c.pem" || s.tlsKey != "/certs/k.pem" ||
		s.tlsCA != "/etc/ca.pem" || s.inboxPrefix != "_I.ops" || s.jsDomain != "hub" {
		t.Errorf("selected context: %+v", s)
	}

	// The environment beats the context; its credentials replace the
	// context's as a whole.
	s, err = resolveConn(connFlags{}, with(map[string]string{envNATSURL: "nats://env:4222", envNATSCreds: "/env.creds", envNATSCA: "/env-ca.pem"}))
	if err != nil {
		t.Fatal(err)
	}
	if s.server != "nats://env:4222" || s.auth.creds != "/env.creds" || s.auth.user != "" || s.tlsCA != "/env-ca.pem" || s.tlsCert != "/home/op/c.pem" {
		t.Errorf("environment over context: %+v", s)
	}

	// Flags beat both.
	s, err = resolveConn(connFlags{server: "nats://flag:4222", nkey: "/n.seed", tlsCert: "/fc", tlsKey: "/fk"},
		with(map[string]string{envNATSURL: "nats://env:4222", envNATSUser: "eu"}))
	if err != nil {
		t.Fatal(err)
	}
	if s.server != "nats://flag:4222" || s.serverFrom != "flags" || s.auth.nkey != "/n.seed" || s.auth.user != "" || s.tlsCert != "/fc" || s.tlsKey != "/fk" {
		t.Errorf("flags over everything: %+v", s)
	}

	// The JetStream domain: --js-domain, else GO_CLUSTER_JS_DOMAIN, else
	// the context's.
	if s, err = resolveConn(connFlags{}, with(map[string]string{envJSDomain: "env-hub"})); err != nil || s.jsDomain != "env-hub" {
		t.Errorf("%s over the context: %q, %v", envJSDomain, s.jsDomain, err)
	}
	if s, err = resolveConn(connFlags{jsDomain: "flag-hub"}, with(map[string]string{envJSDomain: "env-hub"})); err != nil || s.jsDomain != "flag-hub" {
		t.Errorf("--js-domain over everything: %q, %v", s.jsDomain, err)
	}

	// --context beats NATS_CONTEXT, which beats the selection.
	s, err = resolveConn(connFlags{context: "other"}, with(map[string]string{envNATSContext: "prod"}))
	if err != nil || s.server != "nats://other:4222" || s.auth.creds != "/o.creds" || s.context != "other" {
		t.Errorf("--context: %+v, %v", s, err)
	}
	s, err = resolveConn(connFlags{}, with(map[string]string{envNATSContext: "other"}))
	if err != nil || s.server != "nats://other:4222" {
		t.Errorf("NATS_CONTEXT: %+v, %v", s, err)
	}

	// HOME/.config when XDG_CONFIG_HOME is not set.
	home := t.TempDir()
	writeContext(t, filepath.Join(home, ".config"), "h", `{"url":"nats://home:4222"}`, true)
	s, err = resolveConn(connFlags{}, getenvOf(map[string]string{"HOME": home}))
	if err != nil || s.server != "nats://home:4222" {
		t.Errorf("context under HOME: %+v, %v", s, err)
	}

	// Nothing anywhere: the default server.
	s, err = resolveConn(connFlags{}, getenvOf(map[string]string{"XDG_CONFIG_HOME": t.TempDir()}))
	if err != nil || s.server != defaultServer || s.context != "" || s.auth.hasAuth() {
		t.Errorf("defaults: %+v, %v", s, err)
	}
	if !strings.Contains(s.describe(), "--context") {
		t.Errorf("describe %q does not say how to choose a server", s.describe())
	}
}

func TestResolveConnErrors(t *testing.T) {
	t.Parallel()
	config := t.TempDir()
	writeContext(t, config, "jwt", `{"url":"nats://x","user_jwt":"eyJ..."}`, false)
	writeContext(t, config, "op", `{"url":"nats://x","creds":"op://vault/creds"}`, false)
	writeContext(t, config, "broken", `{"url":`, false)
	writeContext(t, config, "envpw", `{"user":"u","password":"env://PW"}`, false)
	env := getenvOf(map[string]string{"XDG_CONFIG_HOME": config})
	for _, tc := range []struct {
		name  string
		flags connFlags
		is    error
		want  string
	}{
		{"unknown context", connFlags{context: "nope"}, errContext, "no such context"},
		{"path in the name", connFlags{context: "../x"}, errContext, `".."`},
		{"unsupported setting", connFlags{context: "jwt"}, errContext, `"user_jwt" is not supported`},
		{"unsupported reference", connFlags{context: "op"}, errContext, "op:// references are not supported"},
		{"invalid JSON", connFlags{context: "broken"}, errContext, "broken.json"},
		{"unset env:// password", connFlags{context: "envpw"}, errContext, `"PW" is not set`},
		{"cert without key", connFlags{tlsCert: "/c"}, errUsage, "--tlscert and --tlskey"},
		{"two credentials", connFlags{user: "u", creds: "/c"}, errUsage, "more than one"},
		{"password alone", connFlags{password: "p"}, errUsage, "password without a user"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := resolveConn(tc.flags, env)
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %v with %q", err, tc.is, tc.want)
			}
		})
	}
	// env:// resolves from the environment.
	s, err := resolveConn(connFlags{context: "envpw"}, getenvOf(map[string]string{"XDG_CONFIG_HOME": config, "PW": "secret"}))
	if err != nil || s.auth.password != "secret" {
		t.Errorf("env:// password: %+v, %v", s, err)
	}
	// A selected context that is gone is an error, not a silent default.
	if err := os.WriteFile(filepath.Join(config, "nats", "context.txt"), []byte("gone"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := resolveConn(connFlags{}, env); !errors.Is(err, errContext) || !strings.Contains(err.Error(), "selected in") {
		t.Errorf("selected context missing: %v", err)
	}
}
