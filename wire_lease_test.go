package cluster

import (
	"strings"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/wire"
)

func TestLeaseExpiry(t *testing.T) {
	t.Parallel()
	live := Lease{NodeID: "a", Epoch: 1, ExpiresAt: time.Now().Add(time.Hour)}
	if live.IsExpired() || !live.IsValid() || live.TimeUntilExpiry() <= 59*time.Minute {
		t.Errorf("live lease: expired=%v valid=%v until=%v", live.IsExpired(), live.IsValid(), live.TimeUntilExpiry())
	}
	old := Lease{NodeID: "a", Epoch: 1, ExpiresAt: time.Now().Add(-time.Second)}
	if !old.IsExpired() || old.IsValid() || old.TimeUntilExpiry() != 0 {
		t.Errorf("old lease: expired=%v valid=%v until=%v", old.IsExpired(), old.IsValid(), old.TimeUntilExpiry())
	}
	released := Lease{Epoch: 4, ExpiresAt: time.Now().Add(time.Hour)}
	if released.IsValid() {
		t.Errorf("released lease: valid")
	}
}

func TestLeaseJSONMatchesSpecification(t *testing.T) {
	t.Parallel()
	at := time.Date(2024, 1, 15, 10, 29, 50, 0, time.UTC)
	data, err := encodeLease(Lease{NodeID: "node-1", Epoch: 5, AcquiredAt: at, ExpiresAt: at.Add(10 * time.Second), Revision: 9})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"node_id":"node-1","epoch":5,"expires_at":"2024-01-15T10:30:00Z","acquired_at":"2024-01-15T10:29:50Z"}`
	// ttl_ms is this library's addition; a record without it is read as before.
	if string(data) != want {
		t.Errorf("got  %s\nwant %s", data, want)
	}
	l, err := decodeLease(data, 9)
	if err != nil || l.NodeID != "node-1" || l.Epoch != 5 || l.Revision != 9 || !l.ExpiresAt.Equal(at.Add(10*time.Second)) {
		t.Errorf("round trip: %+v, %v", l, err)
	}
}

func TestDecodeLeaseRejectsGarbage(t *testing.T) {
	t.Parallel()
	for name, v := range map[string]string{
		"empty":          "",
		"not json":       "{not json",
		"array":          "[1,2]",
		"string epoch":   `{"node_id":"a","epoch":"5"}`,
		"negative epoch": `{"node_id":"a","epoch":-1}`,
		"held epoch 0":   `{"node_id":"a","epoch":0}`,
		"released 0":     `{"node_id":"","epoch":0}`,
		"empty object":   `{}`,
		"null":           `null`,
		"bad node id":    `{"node_id":"a..b","epoch":1}`,
		"negative ttl":   `{"node_id":"a","epoch":1,"ttl_ms":-5}`,
		"oversized":      `{"node_id":"a","epoch":1,"x":"` + strings.Repeat("x", wire.MaxLeaseSize) + `"}`,
	} {
		if _, err := decodeLease([]byte(v), 1); err == nil {
			t.Errorf("%s: decoded %q", name, v)
		}
	}
	if l, err := decodeLease([]byte(`{"node_id":"","epoch":3}`), 2); err != nil || l.NodeID != "" || l.Epoch != 3 {
		t.Errorf("released record: %+v %v", l, err)
	}
}
