package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/securetest"
)

// The connection flags, the environment and a nats CLI context, against a
// server that requires mutual TLS and either an NKey or a user and
// password.
func TestCLISecureConnection(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	bin := buildCLI(t)
	pki := securetest.NewPKI(t)
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, err := kp.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	seed, err := kp.Seed()
	if err != nil {
		t.Fatal(err)
	}
	seedFile := filepath.Join(t.TempDir(), "op.nk")
	if err := os.WriteFile(seedFile, seed, 0o600); err != nil {
		t.Fatal(err)
	}
	ns := securetest.RunServer(t, func(o *server.Options) {
		o.TLSConfig = pki.ServerTLS(t, true)
		o.TLSVerify = true
		o.Nkeys = []*server.NkeyUser{{Nkey: pub}}
		o.Users = []*server.User{{Username: "op", Password: "s3cret"}}
	})
	url := ns.ClientURL()

	const id = "sec"
	nc, err := nats.Connect(url, append(pki.ClientOptions(), nats.UserInfo("op", "s3cret"), nats.Name("s1"))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	m := startMemberOn(t, nc, id, "s1")
	natstest.WaitFor(t, 15*time.Second, m.node.IsLeader, "s1 did not lead")

	tlsFlags := []string{"--tlsca", pki.CAFile, "--tlscert", pki.ClientCert, "--tlskey", pki.ClientKey}
	ok := func(t *testing.T, r result) {
		t.Helper()
		if r.code != 0 || !containsRow(r.stdout, "leader", "s1") {
			t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	}
	status := []string{"--cluster", id, "status", "--timeout", "5s"}

	t.Run("flags: TLS and NKey", func(t *testing.T) {
		ok(t, runCLI(t, bin, nil, append(append([]string{"-s", url, "--nkey", seedFile}, tlsFlags...), status...)...))
	})
	t.Run("flags: TLS and user/password", func(t *testing.T) {
		ok(t, runCLI(t, bin, nil, append(append([]string{"--server", url, "--user", "op", "--password", "s3cret"}, tlsFlags...), status...)...))
	})
	t.Run("environment", func(t *testing.T) {
		ok(t, runCLI(t, bin, []string{
			envNATSURL + "=" + url, envNATSUser + "=op", envNATSPassword + "=s3cret",
			envNATSCA + "=" + pki.CAFile, envNATSCert + "=" + pki.ClientCert, envNATSKey + "=" + pki.ClientKey,
		}, status...))
	})

	ctxJSON := `{"description":"test","url":"` + url + `","nkey":"` + seedFile + `","cert":"` + pki.ClientCert +
		`","key":"` + pki.ClientKey + `","ca":"` + pki.CAFile + `"}`
	config := t.TempDir()
	writeContext(t, config, "secure", ctxJSON, false)
	xdg := []string{"XDG_CONFIG_HOME=" + config}

	t.Run("--context", func(t *testing.T) {
		ok(t, runCLI(t, bin, xdg, append([]string{"--context", "secure"}, status...)...))
	})
	t.Run("selected context under HOME", func(t *testing.T) {
		home := t.TempDir()
		writeContext(t, filepath.Join(home, ".config"), "secure", ctxJSON, true)
		ok(t, runCLI(t, bin, []string{"HOME=" + home, "XDG_CONFIG_HOME="}, status...))
	})
	t.Run("the environment beats the context, flags beat both", func(t *testing.T) {
		env := append([]string{envNATSURL + "=nats://127.0.0.1:1"}, xdg...)
		r := runCLI(t, bin, env, append([]string{"--context", "secure"}, status...)...)
		if r.code != 1 || !strings.Contains(r.stderr, "cannot connect to NATS at nats://127.0.0.1:1 (from NATS_URL)") {
			t.Errorf("NATS_URL over the context: exit %d, %q", r.code, r.stderr)
		}
		ok(t, runCLI(t, bin, env, append([]string{"--context", "secure", "-s", url}, status...)...))
		// A flag's credentials replace the context's NKey.
		r = runCLI(t, bin, xdg, append([]string{"--context", "secure", "--user", "op", "--password", "wrong"}, status...)...)
		if r.code != 1 || !strings.Contains(r.stderr, "cannot connect") {
			t.Errorf("a wrong --password over the context's NKey: exit %d, %q", r.code, r.stderr)
		}
	})
	t.Run("refused", func(t *testing.T) {
		for name, args := range map[string][]string{
			"no client certificate": {"-s", url, "--nkey", seedFile, "--tlsca", pki.CAFile},
			"no credentials":        append([]string{"-s", url}, tlsFlags...),
			"wrong password":        append([]string{"-s", url, "--user", "op", "--password", "nope"}, tlsFlags...),
		} {
			r := runCLI(t, bin, nil, append(args, status...)...)
			if r.code != 1 || !strings.Contains(r.stderr, "cannot connect to NATS at "+url) {
				t.Errorf("%s: exit %d, %q", name, r.code, r.stderr)
			}
		}
	})
}
