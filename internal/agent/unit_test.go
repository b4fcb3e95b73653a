package agent

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The shipped systemd unit, the sample file and the polkit example.
const (
	unitFile   = "../../packaging/go-cluster-agent.service"
	sampleFile = "../../packaging/agent.yaml"
	polkitFile = "../../packaging/polkit/50-go-cluster-agent.rules"
)

// systemdUnit is a unit file's [Service] settings: each key's values in
// order (a key given again adds to its list; an empty assignment resets
// it, as systemd reads it).
type systemdUnit map[string][]string

func readUnit(t *testing.T, path string) systemdUnit {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	u := systemdUnit{}
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "["):
			section = strings.Trim(line, "[]")
		case section == "Service":
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				t.Fatalf("%s: %q is not key=value", path, line)
			}
			if v == "" {
				u[k] = nil
				continue
			}
			u[k] = append(u[k], strings.Fields(v)...)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return u
}

// writable reports whether the unit lets its processes write under path:
// with ProtectSystem=strict only the state, runtime, cache and logs
// directories it asks for, and ReadWritePaths=, are.
func (u systemdUnit) writable(path string) bool {
	var dirs []string
	for key, root := range map[string]string{"StateDirectory": "/var/lib/", "RuntimeDirectory": "/run/",
		"CacheDirectory": "/var/cache/", "LogsDirectory": "/var/log/"} {
		for _, d := range u[key] {
			dirs = append(dirs, root+d)
		}
	}
	dirs = append(dirs, u["ReadWritePaths"]...)
	for _, d := range dirs {
		if path == d || strings.HasPrefix(path, strings.TrimSuffix(d, "/")+"/") {
			return true
		}
	}
	return !slices.Contains(u["ProtectSystem"], "strict")
}

// TestShippedUnitLetsNotifyCommandsAndTheServiceWork checks the hardened
// unit against what notify commands and the service exist for (issue 33,
// defect 6): the sample's maintenance_file is writable under it (the
// agent creates it on `go-cluster maintenance on`); `systemctl start
// haproxy` from a notify command reaches systemd over D-Bus (AF_UNIX),
// and, with NoNewPrivileges= ruling out sudo, is authorised by the
// polkit rule shipped as an example for the unit's user; the VIPs get
// their capabilities and address families. systemd does not run here
// (no systemd-run), so the unit's settings are read from the file.
func TestShippedUnitLetsNotifyCommandsAndTheServiceWork(t *testing.T) {
	u := readUnit(t, unitFile)
	cfg, err := Load(sampleFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, cl := range cfg.Clusters {
		if f := cl.MaintenanceFile; f != "" && !u.writable(filepath.Dir(f)) {
			t.Errorf("cluster %s: maintenance_file %s is read-only under the unit (ProtectSystem=%v, StateDirectory=%v, ReadWritePaths=%v)",
				cl.Name, f, u["ProtectSystem"], u["StateDirectory"], u["ReadWritePaths"])
		}
	}
	for _, fam := range []string{"AF_UNIX", "AF_NETLINK", "AF_PACKET", "AF_INET", "AF_INET6"} {
		if !slices.Contains(u["RestrictAddressFamilies"], fam) {
			t.Errorf("RestrictAddressFamilies=%v lacks %s", u["RestrictAddressFamilies"], fam)
		}
	}
	for _, key := range []string{"AmbientCapabilities", "CapabilityBoundingSet"} {
		for _, c := range []string{"CAP_NET_ADMIN", "CAP_NET_RAW"} {
			if !slices.Contains(u[key], c) {
				t.Errorf("%s=%v lacks %s", key, u[key], c)
			}
		}
	}
	user := strings.Join(u["User"], "")
	if user == "" || user == "root" {
		t.Fatalf("User=%q: the unit is meant to run unprivileged", user)
	}
	if strings.Join(u["NoNewPrivileges"], "") == "yes" {
		// sudo cannot work: polkit must authorise systemctl for the user.
		rules, err := os.ReadFile(polkitFile)
		if err != nil {
			t.Fatalf("NoNewPrivileges=yes and no polkit example for systemctl in notify commands: %v", err)
		}
		for _, want := range []string{`"org.freedesktop.systemd1.manage-units"`, `subject.user == "` + user + `"`, `"haproxy.service"`, `action.lookup("unit")`, `action.lookup("verb")`} {
			if !strings.Contains(string(rules), want) {
				t.Errorf("%s does not say %s", polkitFile, want)
			}
		}
	}
}

// TestPolkitExampleAuthorisesOnlyItsUnits runs the polkit example with
// node against a stand-in of polkit's API: systemctl start haproxy by the
// user go-cluster is allowed; another unit, another verb, another user or
// another action is left to polkit's defaults. Needs node (the machine's
// nodejs): skipped without it, failed with CI set.
func TestPolkitExampleAuthorisesOnlyItsUnits(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("node is not installed")
		}
		t.Skip("node is not installed")
	}
	rules, err := os.ReadFile(polkitFile)
	if err != nil {
		t.Fatal(err)
	}
	script := `var rule; var polkit = {Result: {YES: "yes"}, addRule: function(f) { rule = f; }};
` + string(rules) + `
function ask(id, user, unit, verb) {
  return rule({id: id, lookup: function(k) { return {unit: unit, verb: verb}[k]; }}, {user: user}) || "default";
}
console.log([
  ask("org.freedesktop.systemd1.manage-units", "go-cluster", "haproxy.service", "start"),
  ask("org.freedesktop.systemd1.manage-units", "go-cluster", "haproxy.service", "reload"),
  ask("org.freedesktop.systemd1.manage-units", "go-cluster", "sshd.service", "start"),
  ask("org.freedesktop.systemd1.manage-units", "go-cluster", "haproxy.service", "mask"),
  ask("org.freedesktop.systemd1.manage-units", "nobody", "haproxy.service", "start"),
  ask("org.freedesktop.systemd1.manage-unit-files", "go-cluster", "haproxy.service", "start"),
].join(" "));`
	out, err := exec.Command(node, "-e", script).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	if got, want := strings.TrimSpace(string(out)), "yes yes default default default default"; got != want {
		t.Fatalf("answers %q, want %q", got, want)
	}
}
