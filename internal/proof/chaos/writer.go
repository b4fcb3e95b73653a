package chaos

import (
	"context"
	"errors"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
)

// write is the leader's work for one tenure: until ctx ends, prove tenure
// with ValidateLeadership and write to the Fence with the epoch it returns.
// The current leader must never be refused: a refusal while ctx is still
// live means another tenure with a higher epoch wrote during this one. When
// the tenure ends, its epoch is handed to the Fence as a zombie, which later
// replays it as a stale leader's write that must be refused.
func (r *run) write(node *cluster.Node, inst string, ten *Tenure, ctx context.Context) {
	pause := time.NewTimer(0)
	defer pause.Stop()
	var epoch int64
	refused := 0 // fence refusals while live: reported once, with the count
	defer func() {
		if refused > 1 {
			r.checker.Violation("current leader %s was refused by the fence %d times in all during its tenure", inst, refused)
		}
	}()
	for {
		select {
		case <-ctx.Done():
			if epoch > 0 {
				r.fence.Zombie(inst, time.Now(), epoch)
			}
			return
		case <-pause.C:
		}
		vctx, cancel := context.WithTimeout(ctx, 2*r.maxTTL)
		e, err := node.ValidateLeadership(vctx)
		cancel()
		switch {
		case err != nil && ctx.Err() == nil:
			r.countValidateError(err)
		case err == nil && ctx.Err() == nil:
			r.checker.Proven(ten, e)
			epoch = e
			ok, highest, by := r.fence.Write(inst, ten.Start, e)
			if !ok && ctx.Err() == nil {
				// One line per tenure (an epoch that went back is refused at
				// every write); the count follows at its end.
				if refused++; refused == 1 {
					r.checker.Violation("current leader %s refused by the fence: epoch %d < %d written by %s, and its tenure ctx is still live",
						inst, e, highest, by)
				}
			}
		}
		pause.Reset(r.writeInterval())
	}
}

// writeInterval is the pause between two fenced writes: about LeaseTTL/10,
// jittered so that writes and renewals do not fall into step.
func (r *run) writeInterval() time.Duration {
	r.rngMu.Lock()
	defer r.rngMu.Unlock()
	base := r.opts.LeaseTTL / 10
	return base/2 + time.Duration(r.wrng.Int64N(int64(base)))
}

// countValidateError counts a ValidateLeadership failure during a live
// tenure (the tenure is about to end, or NATS is unreachable).
func (r *run) countValidateError(err error) {
	r.statsMu.Lock()
	defer r.statsMu.Unlock()
	switch {
	case errors.Is(err, cluster.ErrLeaseExpired):
		r.validateErrs["lease expired"]++
	case errors.Is(err, cluster.ErrEpochMismatch):
		r.validateErrs["epoch mismatch"]++
	case errors.Is(err, cluster.ErrNotLeader):
		r.validateErrs["not leader"]++
	case errors.Is(err, context.DeadlineExceeded):
		r.validateErrs["timeout"]++
	default:
		r.validateErrs["other"]++
	}
}
