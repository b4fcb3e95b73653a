package agent

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestLoadGoodFile(t *testing.T) {
	cfg, err := Load("testdata/good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Clusters) != 2 || cfg.Listen != "127.0.0.1:9273" {
		t.Fatalf("clusters %d, listen %q", len(cfg.Clusters), cfg.Listen)
	}
	web := cfg.Clusters[0]
	if web.Election.LeaseTTL.D() != 6*time.Second || web.Election.Priority != 10 || *web.Election.Preempt ||
		web.Election.PreemptDelay.D() != 30*time.Second || web.Election.Metadata["zone"] != "a" {
		t.Fatalf("election %+v", web.Election)
	}
	if len(web.Checks) != 6 || web.Checks[1].HTTP.Status != 204 || web.Checks[4].File.Present == nil || *web.Checks[4].File.Present {
		t.Fatalf("checks %+v", web.Checks)
	}
	if len(web.VIPs) != 2 || web.VIPs[0].GARP.Refresh == nil || *web.VIPs[0].GARP.Refresh != 0 || web.VIPs[0].Routes[0].Metric != 10 {
		t.Fatalf("vips %+v", web.VIPs)
	}
	if web.Service.OnExit != OnExitStepDown || web.Service.RestartBackoff.Max.D() != time.Minute {
		t.Fatalf("service %+v", web.Service)
	}

	d := cfg.WithDefaults("host-1")
	db := d.Clusters[1]
	if db.Election.NodeID != "host-1" || !*db.Election.Preempt || db.Notify.Timeout.D() != DefaultNotifyTimeout {
		t.Fatalf("defaults of db: %+v", db)
	}
	if d.Clusters[0].Election.NodeID != "web-1" || d.Clusters[0].Checks[2].Rise != DefaultRise || d.Clusters[0].Checks[2].Fall != DefaultFall {
		t.Fatalf("defaults of web: %+v", d.Clusters[0])
	}
	if *d.Clusters[0].VIPs[1].GARP.Refresh != Duration(DefaultGARPRefresh) || *d.Clusters[0].VIPs[0].GARP.Refresh != 0 {
		t.Fatal("refresh defaults wrong: 0s must stay off, unset must be the default")
	}
}

// problems parses text and returns its problems as strings.
func problems(t *testing.T, text string) []string {
	t.Helper()
	_, err := Parse("agent.yaml", []byte(text))
	if err == nil {
		t.Fatal("no error")
	}
	if !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("%v does not wrap ErrInvalidConfig", err)
	}
	var ce *ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("%T is not a *ConfigError", err)
	}
	var out []string
	for _, p := range ce.Problems {
		out = append(out, p.String())
	}
	return out
}

func TestUnknownKeyNamesFileFieldAndLine(t *testing.T) {
	got := problems(t, `clusters:
  - name: web
    election:
      lease_ttl: 5s
      leaseTTL: 5s
`)
	want := `agent.yaml:5: clusters[0].election.leaseTTL: unknown key "leaseTTL" (known here: node_id, lease_ttl,`
	if len(got) != 1 || !strings.HasPrefix(got[0], want) {
		t.Fatalf("got %q, want one starting %q", got, want)
	}
}

func TestBadValueNamesFieldPath(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"duration without unit", "clusters:\n  - name: web\n    election:\n      lease_ttl: 10\n",
			"agent.yaml:4: clusters[0].election.lease_ttl: 10 has no unit"},
		{"ttl below minimum", "clusters:\n  - name: web\n    election:\n      lease_ttl: 100ms\n",
			"agent.yaml:4: clusters[0].election.lease_ttl: 100ms must be between 500ms and 24h0m0s"},
		{"renew too slow", "clusters:\n  - name: web\n    election:\n      lease_ttl: 3s\n      renew_interval: 2s\n",
			"agent.yaml:5: clusters[0].election.renew_interval: RenewInterval 2s must be positive and at most LeaseTTL/3"},
		{"not a number", "clusters:\n  - name: web\n    election:\n      priority: high\n",
			`agent.yaml:4: clusters[0].election.priority: want a whole number, not "high"`},
		{"bad vip", "clusters:\n  - name: web\n    vips:\n      - address: 10.0.0.300/24\n        interface: eth0\n",
			"agent.yaml:4: clusters[0].vips[0].address: want an address with its prefix length"},
		{"bad cluster name", "clusters:\n  - name: web.prod\n",
			`agent.yaml:2: clusters[0].name: name "web.prod" has character '.'`},
		{"two check kinds", "clusters:\n  - name: web\n    checks:\n      - name: x\n        tcp: {address: \"a:1\"}\n        file: {path: /x}\n",
			"agent.yaml:4: clusters[0].checks[0]: a check has exactly one of exec, http, tcp, interface and file (this one has 2)"},
		{"grace too long", "clusters:\n  - name: web\n    election: {lease_ttl: 2s}\n    service:\n      argv: [x]\n      grace: 5s\n",
			"agent.yaml:6: clusters[0].service.grace: 5s is longer than the election's timings allow"},
		{"on_exit", "clusters:\n  - name: web\n    service:\n      argv: [x]\n      on_exit: reboot\n",
			`agent.yaml:5: clusters[0].service.on_exit: "reboot": want restart or step_down`},
		{"list for a mapping", "clusters:\n  - name: web\n    election: [a]\n",
			"agent.yaml:3: clusters[0].election: want a mapping of keys, not a list"},
		{"syntax", "clusters:\n  - name: web\n   bad: [\n",
			"agent.yaml:1: yaml: line 1: did not find expected '-' indicator"},
		{"repeated key", "clusters:\n  - name: web\n    name: db\n",
			"agent.yaml:3: clusters[0].name: repeated key (first on line 2)"},
		{"no clusters", "listen: 127.0.0.1:1\n", "agent.yaml: clusters: at least one cluster is needed"},
		{"route with host bits", "clusters:\n  - name: web\n    vips:\n      - address: 10.0.0.100/24\n        interface: eth0\n        routes:\n          - {to: 10.9.1.0/16}\n",
			"agent.yaml:7: clusters[0].vips[0].routes[0].to: 10.9.1.0/16 has host bits set: write 10.9.0.0/16"},
		{"route src of another family", "clusters:\n  - name: web\n    vips:\n      - address: 10.0.0.100/24\n        interface: eth0\n        routes:\n          - {to: 10.9.0.0/16, src: \"2001:db8::1\"}\n",
			"agent.yaml:7: clusters[0].vips[0].routes[0].src: 2001:db8::1 is not of the route's address family"},
		{"label without a name", "clusters:\n  - name: web\n    vips:\n      - address: 10.0.0.100/24\n        interface: eth0\n        label: \"eth0:\"\n",
			`agent.yaml:6: clusters[0].vips[0].label: "eth0:" must be "eth0:" and a name`},
		{"vip with prefix length 0", "clusters:\n  - name: web\n    vips:\n      - address: 10.0.0.100/0\n        interface: eth0\n",
			"agent.yaml:4: clusters[0].vips[0].address: vip: invalid netmask: 0 for 10.0.0.100 (want 1-32)"},
		{"negative route table", "clusters:\n  - name: web\n    vips:\n      - address: 10.0.0.100/24\n        interface: eth0\n        routes:\n          - {to: default, table: -1}\n",
			"agent.yaml:7: clusters[0].vips[0].routes[0].table: -1 is negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := problems(t, tc.text)
			if len(got) != 1 || !strings.HasPrefix(got[0], tc.want) {
				t.Fatalf("got %q\nwant one starting %q", got, tc.want)
			}
		})
	}
}

func TestSeveralProblemsAreAllReported(t *testing.T) {
	got := problems(t, `clusters:
  - name: web
    election:
      lease_ttl: 10
      colour: blue
    vips:
      - address: 10.0.0.100/24
        interface: eth0
  - name: web
    vips:
      - address: 10.0.0.100/24
        interface: this-name-is-far-too-long
`)
	want := []string{
		"agent.yaml:4: clusters[0].election.lease_ttl: 10 has no unit",
		`agent.yaml:5: clusters[0].election.colour: unknown key "colour"`,
		`agent.yaml:9: clusters[1].name: cluster "web" is already configured at clusters[0]`,
		"agent.yaml:11: clusters[1].vips[0].address: 10.0.0.100 is already a VIP at clusters[0].vips[0]",
		`agent.yaml:12: clusters[1].vips[0].interface: "this-name-is-far-too-long" is longer than 15 bytes`,
	}
	if len(got) != len(want) {
		t.Fatalf("got %d problems:\n%s\nwant %d", len(got), strings.Join(got, "\n"), len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("problem %d = %q, want it to start %q", i, got[i], want[i])
		}
	}
}

func TestMissingFile(t *testing.T) {
	_, err := Load("testdata/absent.yaml")
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "testdata/absent.yaml") {
		t.Fatalf("err = %v", err)
	}
}

// TestSampleConfigIsValid: the sample shipped in packaging/ stays valid.
func TestSampleConfigIsValid(t *testing.T) {
	if _, err := Load("../../packaging/agent.yaml"); err != nil {
		t.Fatal(err)
	}
}

// TestTabErrorNamesTheTabsLine: a tab in the indentation is reported on
// the tab's line. go.yaml.in/yaml/v3 names the line where the enclosing
// value began: on main "agent.yaml:2: yaml: line 2: found a tab character
// that violates indentation" for a tab on line 3 (issue 33, defect 11).
func TestTabErrorNamesTheTabsLine(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"under a list item", "clusters:\n  - name: web\n\telection: {}\n",
			"agent.yaml:3: yaml: line 3: found a tab character that violates indentation"},
		{"deeper", "listen: 127.0.0.1:1\nclusters:\n  - name: web\n    election:\n      lease_ttl: 2s\n    checks:\n      - name: x\n  \t  file: {path: /x}\n",
			"agent.yaml:8: yaml: line 8: found a tab character that violates indentation"},
		{"tab before a key", "clusters:\n  - name: web\n    election:\n\tlease_ttl: 2s\n",
			"agent.yaml:4: yaml: line 4: found character that cannot start any token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := problems(t, tc.text)
			if len(got) != 1 || !strings.HasPrefix(got[0], tc.want) {
				t.Fatalf("got %q\nwant one starting %q", got, tc.want)
			}
		})
	}
}
