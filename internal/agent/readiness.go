package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// readiness runs a cluster's checks, each on its own interval with rise
// and fall, and says whether they all pass and no maintenance file is
// present. It is what the node's ReadinessCheck reads.
type readiness struct {
	maintenance string
	onFault     func(reason string) // called, outside the lock, when ready turns into not ready

	mu     sync.Mutex
	states []checkState
	wasOK  bool
	forced bool // maintenance switched on by command
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// checkState is one check's standing: unknown until its first result,
// which decides it; then rise passes or fall failures in a row change it.
type checkState struct {
	check   Check
	known   bool
	passing bool
	streak  int // results in a row that disagree with passing
	last    error
}

// newReadiness starts the checks (with defaults applied); stop ends them.
func newReadiness(checks []Check, maintenance string, onFault func(string)) *readiness {
	ctx, cancel := context.WithCancel(context.Background())
	r := &readiness{maintenance: maintenance, onFault: onFault, cancel: cancel, states: make([]checkState, len(checks))}
	for i, c := range checks {
		r.states[i].check = c
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.loop(ctx, i)
		}()
	}
	return r
}

// stop ends the checks and waits for them.
func (r *readiness) stop() {
	r.cancel()
	r.wg.Wait()
}

func (r *readiness) loop(ctx context.Context, i int) {
	c := r.states[i].check // not changed after newReadiness
	tick := time.NewTicker(c.Interval.D())
	defer tick.Stop()
	for {
		pctx, cancel := context.WithTimeout(ctx, c.Timeout.D())
		err := probe(pctx, &c)
		cancel()
		if ctx.Err() != nil {
			return
		}
		r.record(i, err)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// record applies one result of check i.
func (r *readiness) record(i int, err error) {
	r.mu.Lock()
	s := &r.states[i]
	s.last = err
	pass := err == nil
	switch {
	case !s.known:
		s.known, s.passing, s.streak = true, pass, 0
	case pass == s.passing:
		s.streak = 0
	default:
		s.streak++
		if need := map[bool]int{true: s.check.Rise, false: s.check.Fall}[pass]; s.streak >= need {
			s.passing, s.streak = pass, 0
		}
	}
	r.mu.Unlock()
	r.ready() // reports a fault if this made the node not ready
}

// ready returns nil when every check passes and the maintenance file is
// absent; otherwise why not.
func (r *readiness) ready() error {
	err := r.evaluate()
	r.mu.Lock()
	fault := r.wasOK && err != nil
	r.wasOK = err == nil
	r.mu.Unlock()
	if fault && r.onFault != nil {
		r.onFault(err.Error())
	}
	return err
}

// setMaintenance switches the maintenance mode set by command.
func (r *readiness) setMaintenance(on bool) {
	r.mu.Lock()
	r.forced = on
	r.mu.Unlock()
	r.ready() // a fault, if this ends readiness
}

// maintenanceOn reports whether maintenance was switched on by command.
func (r *readiness) maintenanceOn() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.forced
}

func (r *readiness) evaluate() error {
	if r.maintenanceOn() {
		return errors.New("maintenance: switched on by go-cluster maintenance")
	}
	if r.maintenance != "" {
		if _, err := os.Stat(r.maintenance); err == nil {
			return fmt.Errorf("maintenance: %s is present", r.maintenance)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	for _, s := range r.states {
		switch {
		case !s.known:
			errs = append(errs, fmt.Errorf("check %s: no result yet", s.check.Name))
		case !s.passing:
			errs = append(errs, fmt.Errorf("check %s failing (last result: %v)", s.check.Name, s.last))
		}
	}
	return errors.Join(errs...)
}
