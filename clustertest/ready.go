package clustertest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// pollInterval is how often the readiness checks poll.
const pollInterval = 5 * time.Millisecond

// waitAccepting waits until ns listens on all its ports, failing early if the
// server logged a fatal error (an embedded server does not exit on one).
func waitAccepting(ns *server.Server, lg *serverLogger, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if err := lg.err(); err != nil {
			return err
		}
		if ns.ReadyForConnections(50 * time.Millisecond) {
			return lg.err()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not accepting connections after %v", timeout)
		}
	}
}

// waitJetStream waits until a client of url can use JetStream: the server
// has started it and, in operator mode, resolved the client's account.
func waitJetStream(url string, timeout time.Duration) error {
	nc, err := nats.Connect(url, nats.NoReconnect(), nats.Timeout(timeout))
	if err != nil {
		return fmt.Errorf("connect %s: %w", url, err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		actx, acancel := context.WithTimeout(ctx, time.Second)
		_, err := js.AccountInfo(actx)
		acancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: JetStream not usable: %w", url, errors.Join(err, ctx.Err()))
		case <-time.After(pollInterval):
		}
	}
}

// poll reports whether cond became true within timeout.
func poll(timeout time.Duration, cond func() bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		if cond() {
			return true
		}
		select {
		case <-deadline.C:
			return cond()
		case <-tick.C:
		}
	}
}
