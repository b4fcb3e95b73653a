package cluster

import "fmt"

// LeaderHookPolicy says what a node does when its OnBecomeLeader returns
// an error (Config.OnBecomeLeaderError).
type LeaderHookPolicy int

const (
	// LeaderHookErrorLogged is the default, as the specification has it:
	// the error is logged and counted (Node.HookFailures), and the node
	// goes on leading. For leader work that retries on its own.
	LeaderHookErrorLogged LeaderHookPolicy = iota
	// LeaderHookErrorStepsDown steps the node down, as StepDown does
	// (OnLoseLeadership, release, Cooldown), so that another node leads:
	// for leader work that can fail to start (a port taken, a disk not
	// mounted) where another host may do better. Only the tenure whose
	// hook failed is ended; a node alone in its cluster leads again after
	// its Cooldown.
	LeaderHookErrorStepsDown
)

// String names the policy.
func (p LeaderHookPolicy) String() string {
	switch p {
	case LeaderHookErrorLogged:
		return "logged"
	case LeaderHookErrorStepsDown:
		return "steps-down"
	}
	return fmt.Sprintf("LeaderHookPolicy(%d)", int(p))
}

func (p LeaderHookPolicy) validate() error {
	if p != LeaderHookErrorLogged && p != LeaderHookErrorStepsDown {
		return fmt.Errorf("%w: OnBecomeLeaderError is %v, not a LeaderHookPolicy", ErrInvalidConfig, p)
	}
	return nil
}
