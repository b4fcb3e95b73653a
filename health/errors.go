package health

import (
	"errors"

	cluster "github.com/ozanturksever/go-cluster"
)

// Sentinel errors. Every error the package returns wraps one of these, a
// context error (the caller's ctx was cancelled) or, rarely, a nats.go
// error (for example nats.ErrConnectionClosed), with details in the message;
// test them with errors.Is.
var (
	// ErrInvalidConfig is cluster.ErrInvalidConfig: a Config field or an
	// argument (such as the nodeID given to QueryNode) is missing or not a
	// valid identifier. The message names the field.
	ErrInvalidConfig = cluster.ErrInvalidConfig

	// ErrAlreadyStarted: Start was called on a Checker that is running.
	ErrAlreadyStarted = errors.New("checker already started")
	// ErrNotStarted: the operation needs a connection and the Checker has
	// not been started.
	ErrNotStarted = errors.New("checker not started")
	// ErrStopped: the Checker has been stopped; it cannot be started again.
	ErrStopped = errors.New("checker stopped")
	// ErrConnect: the Checker could not connect to any of Config.NATSURLs.
	ErrConnect = errors.New("cannot connect to NATS")

	// ErrNoResponders: nobody answers the subject (the node does not exist,
	// is not running, or no node of the cluster is up). Reported as soon as
	// the NATS server says so, well before the timeout. Errors wrapping it
	// also wrap nats.ErrNoResponders.
	ErrNoResponders = errors.New("no responders")
	// ErrTimeout: no reply arrived within the timeout. Errors wrapping it also
	// wrap the underlying context.DeadlineExceeded or nats.ErrTimeout.
	ErrTimeout = errors.New("query timed out")
	// ErrRemote: the node answered with an error reply (a Response whose
	// Error is set), for example because a custom value cannot be encoded
	// as JSON. The message carries the node's error text.
	ErrRemote = errors.New("node replied with an error")
	// ErrInvalidResponse: a reply could not be decoded as a Response, or
	// came from another node than the one asked.
	ErrInvalidResponse = errors.New("invalid response")
)
