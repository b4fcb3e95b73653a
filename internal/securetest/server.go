package securetest

import (
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// RunServer starts an embedded nats-server with JetStream on 127.0.0.1 (a
// random port, a store directory under t.TempDir()), after configure has
// adjusted its options (TLS, users, operator...). It waits until the server
// accepts connections and shuts it down at test cleanup. The harness of
// internal/natstest is not used because its readiness check connects
// without credentials or TLS.
func RunServer(t testing.TB, configure func(*server.Options)) *server.Server {
	t.Helper()
	opts := &server.Options{
		ServerName:         "secure",
		Host:               "127.0.0.1",
		Port:               server.RANDOM_PORT,
		NoSigs:             true,
		NoLog:              true,
		JetStream:          true,
		StoreDir:           t.TempDir(),
		JetStreamMaxMemory: 64 << 20,
		JetStreamMaxStore:  256 << 20,
	}
	if configure != nil {
		configure(opts)
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		t.Fatalf("securetest: new server: %v", err)
	}
	ns.Start()
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("securetest: server not ready for connections")
	}
	return ns
}
