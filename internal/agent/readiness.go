package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"sync"
	"time"
)

// readiness runs a cluster's checks, each on its own interval with rise
// and fall, and says whether they all pass and no maintenance file is
// present. It is what the node's ReadinessCheck reads.
type readiness struct {
	maintenance string
	// onChange is called, outside the locks, after a check's result or
	// the maintenance switch: the member judges readiness there, and
	// decides and marks a fault in one step (member.judgeChange). Without
	// it, the change is judged and no fault reported.
	onChange func(*readiness)
	log      *slog.Logger // a check's failure and recovery, once each

	mu     sync.Mutex
	states []checkState
	forced bool // maintenance switched on by command
	// judging makes a judgement one step: the standing read and wasOK
	// updated together. A judgement that read the standing before a
	// check's newer result must not overwrite the newer one's (a fault
	// from a result already superseded).
	judging sync.Mutex
	wasOK   bool // the last judgement's; guarded by judging
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// checkState is one check's standing: unknown until its first result,
// which decides it; then rise passes or fall failures in a row change it.
type checkState struct {
	check   Check
	known   bool
	passing bool
	streak  int // results in a row that disagree with passing
	last    error
	took    time.Duration // the last probe's (metrics)
}

// newReadiness starts the checks (with defaults applied); stop ends them.
// With prev (a reload), a check that prev runs unchanged keeps its
// standing, and a new one is probed once before newReadiness returns:
// a reload must not make a ready node look not ready while its checks
// have no result yet (its leader would step down).
func newReadiness(checks []Check, maintenance string, onChange func(*readiness), prev *readiness, log *slog.Logger) *readiness {
	ctx, cancel := context.WithCancel(context.Background())
	r := &readiness{maintenance: maintenance, onChange: onChange, log: log, cancel: cancel, states: make([]checkState, len(checks))}
	for i, c := range checks {
		r.states[i].check = c
	}
	if prev != nil {
		r.inherit(prev)
		r.wasOK = prev.judge().err == nil
	}
	for i := range checks {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.loop(ctx, i)
		}()
	}
	return r
}

// inherit takes the standing of the checks prev runs unchanged and its
// maintenance switch, and probes the others once, all at once. The
// switch before the loops start: their first judgements must not find a
// node in maintenance ready (a fault, then, when the switch came).
func (r *readiness) inherit(prev *readiness) {
	prev.mu.Lock()
	old := append([]checkState(nil), prev.states...)
	r.forced = prev.forced
	prev.mu.Unlock()
	var wg sync.WaitGroup
	for i := range r.states {
		s := &r.states[i]
		found := false
		for _, o := range old {
			if o.known && reflect.DeepEqual(o.check, s.check) {
				*s, found = o, true
				break
			}
		}
		if found {
			continue
		}
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), s.check.Timeout.D())
			defer cancel()
			err := probe(ctx, &s.check)
			s.known, s.passing, s.last = true, err == nil, err
		})
	}
	wg.Wait()
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
		start := time.Now()
		err := probe(pctx, &c)
		cancel()
		if ctx.Err() != nil {
			return
		}
		r.setTook(i, time.Since(start))
		r.record(i, err)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// record applies one result of check i, and logs the check's standing
// when it changes: its failure (or a failing first result) and its
// recovery, once each, not every interval.
func (r *readiness) record(i int, err error) {
	r.mu.Lock()
	s := &r.states[i]
	s.last = err
	pass := err == nil
	was, known := s.passing, s.known
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
	now, name := s.passing, s.check.Name
	r.mu.Unlock()
	switch {
	case r.log == nil:
	case !now && (!known || was):
		r.log.Warn("check failing", "check", name, "err", err)
	case now && known && !was:
		r.log.Info("check passes again", "check", name)
	}
	r.changed() // a fault if this made the node not ready
}

// changed has a change of the checks or the switch judged: by onChange,
// which reports the fault it may show.
func (r *readiness) changed() {
	if r.onChange == nil {
		r.judge()
		return
	}
	r.onChange(r)
}

// verdict is one judgement of readiness.
type verdict struct {
	err     error // nil when ready; otherwise why not
	decided bool  // every check has had a result (read with err, at once)
	fault   bool  // the judgement before was ready and this one is not
}

// judge judges readiness now: nil when every check passes and the
// maintenance file is absent, otherwise why not, and whether this
// judgement ends readiness (a fault, which the caller reports: it is
// the judgement's alone).
func (r *readiness) judge() verdict {
	r.judging.Lock()
	defer r.judging.Unlock()
	decided, err := r.evaluate()
	v := verdict{err: err, decided: decided, fault: r.wasOK && err != nil}
	r.wasOK = err == nil
	return v
}

// setMaintenance switches the maintenance mode set by command.
func (r *readiness) setMaintenance(on bool) {
	r.mu.Lock()
	r.forced = on
	r.mu.Unlock()
	r.changed() // a fault, if this ends readiness
}

// maintenanceOn reports whether maintenance was switched on by command.
func (r *readiness) maintenanceOn() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.forced
}

// evaluate says whether every check has had a result, and why the node
// is not ready (nil if it is), both from one reading of the checks.
func (r *readiness) evaluate() (decided bool, err error) {
	maintenance := r.maintenanceFile()
	r.mu.Lock()
	defer r.mu.Unlock()
	decided = true
	for _, s := range r.states {
		decided = decided && s.known
	}
	if r.forced {
		return decided, errors.New("maintenance: switched on by go-cluster maintenance")
	}
	if maintenance != nil {
		return decided, maintenance
	}
	var errs []error
	for _, s := range r.states {
		switch {
		case s.check.Weight != 0: // lowers the priority instead (weights.go)
		case !s.known:
			errs = append(errs, fmt.Errorf("check %s: no result yet", s.check.Name))
		case !s.passing && s.last == nil: // rising: passed again, not rise times yet
			errs = append(errs, fmt.Errorf("check %s failing (passed %d of the %d times in a row it needs to pass again)", s.check.Name, s.streak, s.check.Rise))
		case !s.passing:
			errs = append(errs, fmt.Errorf("check %s failing (last result: %v)", s.check.Name, s.last))
		}
	}
	return decided, errors.Join(errs...)
}

// maintenanceFile is the error of a maintenance file that is present.
func (r *readiness) maintenanceFile() error {
	if r.maintenance == "" {
		return nil
	}
	if _, err := os.Stat(r.maintenance); err == nil {
		return fmt.Errorf("maintenance: %s is present", r.maintenance)
	}
	return nil
}
