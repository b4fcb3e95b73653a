package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWarningsShortLeaseOnAReplicatedBucket: a lease_ttl that cannot
// ride out the election of a new stream leader (up to 9s) on a
// replicated bucket is warned about, naming file, line and field and the
// lease_ttl that would; a single replica, or a long enough lease_ttl, is
// not (issue 33, defect 4).
func TestWarningsShortLeaseOnAReplicatedBucket(t *testing.T) {
	for _, tc := range []struct {
		name, election, want string
	}{
		{"R3 with 2s", "{lease_ttl: 2s, replicas: 3}", "x.yaml:5: clusters[0].election.lease_ttl: 2s gives the leader 1.3s"},
		{"R3 with 10s", "{lease_ttl: 10s, replicas: 3}", "raise lease_ttl to at least 14s"},
		{"R3 with 10s and renewals every 1s", "{lease_ttl: 11s, renew_interval: 1s, replicas: 3}", "raise lease_ttl to at least 12s"},
		{"R3 with 14s", "{lease_ttl: 14s, replicas: 3}", ""},
		{"R1 with 2s", "{lease_ttl: 2s}", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.yaml")
			data := "clusters:\n  - name: web\n    election:\n      node_id: a\n      lease_ttl: 0s\n"
			data = strings.Replace(data, "    election:\n      node_id: a\n      lease_ttl: 0s\n", "    election:\n      node_id: a\n", 1)
			data += "      " + strings.NewReplacer("{", "", "}", "", ", ", "\n      ").Replace(tc.election) + "\n"
			if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			ws := Warnings(path, cfg)
			var got []string
			for _, w := range ws {
				got = append(got, strings.TrimPrefix(w.String(), filepath.Dir(path)+"/"))
			}
			switch {
			case tc.want == "" && len(got) > 0:
				t.Fatalf("warned: %q", got)
			case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
				t.Fatalf("warnings %q, want one containing %q", got, tc.want)
			}
		})
	}
}

// TestSampleConfigHasNoWarnings: the shipped sample rides out a stream
// leader election on its R3 bucket.
func TestSampleConfigHasNoWarnings(t *testing.T) {
	cfg, err := Load(sampleFile)
	if err != nil {
		t.Fatal(err)
	}
	if ws := Warnings(sampleFile, cfg); len(ws) > 0 {
		t.Fatalf("warnings: %v", ws)
	}
}
