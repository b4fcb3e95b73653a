package cluster

import (
	"strings"
	"testing"

	"github.com/ozanturksever/go-cluster/internal/wire"
)

// A Config's LeaseTTL out of bounds is reported once, under its own
// name, not again as the bucket's (Bucket.LeaseTTL).
func TestConfigLeaseTTLIsNamedOnce(t *testing.T) {
	t.Parallel()
	cfg := testConfig("c", "n", "nats://127.0.0.1:4222")
	cfg.LeaseTTL = wire.MinLeaseTTL - 1
	if err := cfg.check(); err == nil || strings.Count(err.Error(), "LeaseTTL") != 1 || strings.Contains(err.Error(), "BucketLeaseTTL") {
		t.Errorf("Config check with LeaseTTL %v = %v; want it named once, as LeaseTTL", cfg.LeaseTTL, err)
	}
}
