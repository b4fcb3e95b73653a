package runner

import (
	"os"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// parallelTTL is the LeaseTTL of the tests that run side by side: 2s, as
// the root package's, so that a stall of a loaded machine under -race
// costs no tenure.
const parallelTTL = 2 * time.Second

func TestMain(m *testing.M) {
	// The tests that call t.Parallel mostly wait (a first election, a
	// command): 4 per CPU unless -parallel says otherwise.
	natstest.WaitingParallelism(4)
	os.Exit(m.Run())
}
