package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// A Confirm the server does not answer in time costs it no second
// request: a deleted bucket's stream info is answered (stream not
// found), so a lookup cannot tell more, and a server too busy to answer
// one stream info was asked for two by every Confirm that timed out
// (issue 43: the followers of 6,000 clusters on a saturated server).
func TestAConfirmUnansweredInTimeAsksNothingMore(t *testing.T) {
	natstest.CheckLeaks(t)
	srv, px, st := proxiedStore(t, time.Second)
	nc := st.Conn()
	spy := srv.Connect(t)
	infos := count(t, spy, "$JS.API.STREAM.INFO."+wire.KVStream(st.Bucket()))

	px.Delay(2 * time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	_, err := st.Confirm(ctx)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, wire.ErrBucketDeleted) {
		t.Fatalf("Confirm on a server answering late = %v, want a timeout", err)
	}
	px.Restore()
	// Whatever the store sent is with the server after this round trip.
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := spy.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := infos.Load(); n != 1 {
		t.Errorf("a Confirm that timed out sent %d stream infos, want 1", n)
	}
}
