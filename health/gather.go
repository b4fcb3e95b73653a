package health

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// statusHeader and statusNoResponders identify the message a NATS server
// sends to a reply subject when nobody is subscribed to the request's
// subject (nats.go does not export them).
const (
	statusHeader       = "Status"
	statusNoResponders = "503"
)

// gather publishes one request on the cluster subject and collects the
// replies sent to a fresh inbox until the timeout, ctx is done, or want
// replies arrived (want > 0).
func (c *Client) gather(ctx context.Context, want int, timeout time.Duration) ([]Response, error) {
	subject := ClusterSubject(c.clusterID)
	wrap := func(err error) error { return fmt.Errorf("health: query cluster %q: %w", c.clusterID, err) }
	if err := ctx.Err(); err != nil {
		return nil, wrap(err)
	}
	qctx, cancel := context.WithTimeout(ctx, orDefault(timeout))
	defer cancel()

	// An asynchronous subscription queues replies without a preallocated
	// buffer (a synchronous one allocates a 64K-entry channel per call) and
	// without dropping any when many nodes answer at once.
	var in inbox
	in.ready = make(chan struct{}, 1)
	sub, err := c.nc.Subscribe(c.nc.NewInbox(), in.add)
	if err != nil {
		return nil, wrap(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := c.nc.PublishRequest(subject, sub.Subject, nil); err != nil {
		return nil, wrap(err)
	}

	var out []Response
	sorted := func() []Response {
		slices.SortStableFunc(out, func(a, b Response) int { return cmp.Compare(a.NodeID, b.NodeID) })
		return out
	}
	for {
		for _, m := range in.take() {
			if len(m.Data) == 0 && m.Header.Get(statusHeader) == statusNoResponders {
				return nil, wrap(fmt.Errorf("%w: no node answers %s: %w", ErrNoResponders, subject, nats.ErrNoResponders))
			}
			r, err := decodeResponse(m.Data)
			if errors.Is(err, ErrInvalidResponse) {
				c.log.Warn("health: ignored a reply that is not a health response", "subject", subject, "error", err)
				continue
			}
			out = append(out, r) // error replies included, with Error set
			if want > 0 && len(out) >= want {
				return sorted(), nil
			}
		}
		select {
		case <-in.ready:
		case <-qctx.Done():
			switch {
			case ctx.Err() != nil: // the caller's ctx, not our timeout
				return sorted(), wrap(ctx.Err())
			case want > 0:
				return sorted(), wrap(fmt.Errorf("%w: %d of %d nodes answered: %w", ErrTimeout, len(out), want, context.DeadlineExceeded))
			default: // the timeout is the normal end of a cluster query
				return sorted(), nil
			}
		}
	}
}

// inbox queues the replies of one cluster query.
type inbox struct {
	mu    sync.Mutex
	msgs  []*nats.Msg
	ready chan struct{} // capacity 1: "msgs may be non-empty"
}

// add is the subscription's handler.
func (in *inbox) add(m *nats.Msg) {
	in.mu.Lock()
	in.msgs = append(in.msgs, m)
	in.mu.Unlock()
	select {
	case in.ready <- struct{}{}:
	default:
	}
}

// take returns the queued replies and empties the queue.
func (in *inbox) take() []*nats.Msg {
	in.mu.Lock()
	defer in.mu.Unlock()
	msgs := in.msgs
	in.msgs = nil
	return msgs
}
