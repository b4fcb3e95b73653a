package natstest

import (
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// storeFailed is nats-server's "error creating store for stream", which
// jetstream has no name for.
const storeFailed jetstream.ErrorCode = 10049

// CreateAfterDelete calls create, which makes a stream right after the
// test deleted the account's last one, until the server does not refuse
// it with 10049 ("error creating store for stream"); any other error
// fails the test. nats-server (2.15.2, stream.go, the end of
// stream.delete) removes the account's streams directory in a goroutine
// of its own once it is empty, and a stream created meanwhile can lose
// that race: the server logs "could not create storage directory ... no
// such file or directory". Seen under load, about 1 in 100 runs.
func CreateAfterDelete(t testing.TB, what string, create func() error) {
	t.Helper()
	WaitFor(t, 10*time.Second, func() bool {
		err := create()
		var apiErr *jetstream.APIError
		if err != nil && !(errors.As(err, &apiErr) && apiErr.ErrorCode == storeFailed) {
			t.Fatalf("%s: %v", what, err)
		}
		return err == nil
	}, "%s: the server could not make its store", what)
}
