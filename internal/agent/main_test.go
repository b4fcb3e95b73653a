package agent

import (
	"os"
	"testing"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

func TestMain(m *testing.M) {
	// The tests that call t.Parallel mostly wait (on NATS, a lease, a
	// notify command): 4 per CPU unless -parallel says otherwise.
	natstest.WaitingParallelism(4)
	os.Exit(m.Run())
}
