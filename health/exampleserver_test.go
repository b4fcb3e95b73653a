package health_test

import (
	"errors"
	"os"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// embeddedServer starts a JetStream-enabled NATS server on a random
// loopback port, for the examples. stop shuts it down and removes its store.
func embeddedServer() (url string, stop func(), err error) {
	dir, err := os.MkdirTemp("", "health-example-")
	if err != nil {
		return "", nil, err
	}
	ns, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: server.RANDOM_PORT, NoSigs: true, NoLog: true,
		JetStream: true, StoreDir: dir,
	})
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	ns.Start()
	stop = func() {
		ns.Shutdown()
		ns.WaitForShutdown()
		os.RemoveAll(dir)
	}
	if !ns.ReadyForConnections(10 * time.Second) {
		stop()
		return "", nil, errors.New("embedded server not ready")
	}
	return ns.ClientURL(), stop, nil
}
