package bucketmeta

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// Metadata that does not parse is an error naming its key, so that an
// operator knows what to fix; what parses round-trips through Set.
func TestParseErrorsNameTheKey(t *testing.T) {
	for _, c := range []struct {
		m    map[string]string
		name string
	}{
		{map[string]string{KeyLeaseTTL: "ten"}, KeyLeaseTTL},
		{map[string]string{KeyLeaseTTL: "0"}, KeyLeaseTTL},
		{map[string]string{KeyLeaseTTLMax: "-5"}, KeyLeaseTTLMax},
		{map[string]string{KeyLeaseTTLMax: "86400001"}, KeyLeaseTTLMax}, // above 24h
		{map[string]string{KeyProtocol: "two"}, KeyProtocol},
		{map[string]string{KeyEpochBase: "-1"}, KeyEpochBase},
		{map[string]string{KeyEpochBase: "1e6"}, KeyEpochBase},
		{map[string]string{KeyLeaseTTL: "20000", KeyLeaseTTLMax: "10000"}, KeyLeaseTTLMax}, // the TTL above its ceiling
	} {
		_, err := Parse(c.m)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.name) {
			t.Errorf("Parse(%v) = %v, want ErrInvalid naming %s", c.m, err, c.name)
		}
	}

	want := Meta{LeaseTTL: 1500 * time.Millisecond, MaxTTL: 15 * time.Second, Protocol: 2, EpochBase: 1_764_000_000_000_000}
	m := want.Set(map[string]string{"_nats.level": "1", "other": "kept"})
	got, err := Parse(m)
	if err != nil || got != want || m["_nats.level"] != "1" || m["other"] != "kept" {
		t.Errorf("Parse(Set(%+v)) = %+v, %v; map %v", want, got, err, m)
	}
	if got, err := Parse(map[string]string{"_nats.level": "1"}); err != nil || got != (Meta{}) {
		t.Errorf("Parse of no election keys = %+v, %v; want the zero Meta", got, err)
	}
}
