package main

import "errors"

// Errors the commands return. run maps them to exit codes: errUsage to 2,
// errNoLeader to 3, errNotReady to 4, errNoKey to 5, the others to 1.
var (
	// errUsage: bad flags or arguments.
	errUsage = errors.New("usage")
	// errContext: a nats CLI context cannot be found or read.
	errContext = errors.New("NATS context")
	// errConnect: no NATS server could be reached.
	errConnect = errors.New("cannot connect to NATS")
	// errNoCluster: the cluster's KV bucket does not exist.
	errNoCluster = errors.New("cluster not found")
	// errNoJetStream: the server or account has no JetStream.
	errNoJetStream = errors.New("JetStream not available")
	// errNoAnswer: nobody answered a request, or not in time.
	errNoAnswer = errors.New("no answer")
	// errRefused: a node answered a request with an error.
	errRefused = errors.New("request refused")
	// errBadReply: an answer could not be decoded.
	errBadReply = errors.New("invalid reply")
	// errUnhealthy: a node answered a health query with an error.
	errUnhealthy = errors.New("node reported an error")
	// errHandover: the leader stepped down but leadership did not end up
	// where it was asked to go, or no successor appeared in time.
	errHandover = errors.New("handover incomplete")
	// errNoLeader: status found that nobody holds the lease.
	errNoLeader = errors.New("no leader")
	// errNotReady: stepdown --to names a node that reports it is not
	// ready (its ReadinessCheck), so it would not take the lease.
	errNotReady = errors.New("successor not ready")
	// errUnsupported: the request is valid but this version cannot do it.
	errUnsupported = errors.New("not supported")
	// errNoKey: state get found no value under the key.
	errNoKey = errors.New("key not found")
)

// Exit codes, documented in the help text and docs/cli.md.
const (
	exitOK       = 0
	exitFailure  = 1
	exitUsage    = 2
	exitNoLeader = 3 // status: the cluster exists, but nobody leads
	exitNotReady = 4 // stepdown --to: that node is not ready; nothing was sent
	exitNoKey    = 5 // state get: the key has no value
)

// exitCode maps an error to the process's exit status.
func exitCode(err error) int {
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errUsage):
		return exitUsage
	case errors.Is(err, errNoLeader):
		return exitNoLeader
	case errors.Is(err, errNotReady):
		return exitNotReady
	case errors.Is(err, errNoKey):
		return exitNoKey
	default:
		return exitFailure
	}
}
