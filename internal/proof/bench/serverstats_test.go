package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLogWarningsCountsEachKindOnce(t *testing.T) {
	log := `[7] 2026/11/29 13:00:00.000001 [INF] Starting nats-server
[7] 2026/11/29 13:00:01.000001 [WRN] JetStream API queue limit reached, dropping 10000 requests
[7] 2026/11/29 13:00:02.000001 [WRN] JetStream API queue limit reached, dropping 9990 requests
[7] 2026/11/29 13:00:03.000001 [WRN] Internal subscription on "$JS.API.STREAM.CREATE.KV_x" took too long: 2.1s
[7] 2026/11/29 13:00:04.000001 [ERR] Error accepting client connection: accept tcp: too many open files
[7] 2026/11/29 13:22:08.875624 [WRN] 127.0.0.1:50524 - cid:5 - "v1.55.0:go:bench scale 1/3" - Readloop processing time: 3.704917133s
`
	path := filepath.Join(t.TempDir(), "server.log")
	if err := os.WriteFile(path, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	got := logWarnings(path)
	for _, want := range []string{
		`2x "[WRN] JetStream API queue limit reached, dropping"`,
		`1x "[WRN] Internal subscription on"`,
		`1x "[ERR] Error accepting client connection"`,
		`1x "[WRN] Readloop processing time"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("logWarnings = %q, want it to hold %q", got, want)
		}
	}
	if strings.Contains(got, "INF") {
		t.Errorf("logWarnings = %q counts a notice", got)
	}
}
