package engine

import (
	"fmt"
	"time"

	"github.com/ozanturksever/go-cluster/internal/wire"
)

// liveness is nil while the node runs (or has not started) and, if it
// leads, renews in time: a renewal is due Renew after the tenure's last
// acknowledged send and has RequestTimeout to be answered. err is why the
// node stopped on its own, if it did.
func (e *Engine) liveness(now time.Time, err error) error {
	select {
	case <-e.done:
		if err != nil {
			return fmt.Errorf("%w: %w", wire.ErrStopped, err)
		}
		return wire.ErrStopped
	default:
	}
	t := e.view.Tenure(now)
	if t == nil {
		return nil
	}
	if bound, age := t.Renew+e.p.RequestTimeout, now.Sub(t.Sent); age > bound {
		return fmt.Errorf("leading, but no renewal has succeeded for %v (more than %v); the tenure ends in %v",
			age.Round(time.Millisecond), bound, t.Deadline.Sub(now).Round(time.Millisecond))
	}
	return nil
}
