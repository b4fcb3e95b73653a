package agent

// keepalived's view of a node, for notify.state (keepalived's `notify`):
// the state each event leads to.

// keepalived's states, as notify.state's command gets them.
const (
	StateMaster = "MASTER"
	StateBackup = "BACKUP"
	StateFault  = "FAULT"
	StateStop   = "STOP"
)

// currentState is the keepalived state last posted.
func (n *notifier) currentState() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.state
}

// setState starts n in state (a reload's notifier takes over the old
// one's), before anything is posted.
func (n *notifier) setState(state string) {
	n.mu.Lock()
	n.state = state
	n.mu.Unlock()
}

// nextState is the keepalived state after ev, from state (keepalived's
// transitions: a node that knows a leader is BACKUP; MASTER while it
// leads; FAULT from a fault until it clears, losing leadership meanwhile
// included).
func nextState(state string, ev notice) string {
	switch ev.event {
	case EventBecomeLeader:
		return StateMaster
	case EventLoseLeadership:
		if state == StateFault {
			return state
		}
		return StateBackup
	case EventFault:
		return StateFault
	case EventFaultCleared:
		if ev.role == "leader" {
			return StateMaster
		}
		return StateBackup
	case EventLeaderChange:
		if state == "" && ev.role != "leader" {
			return StateBackup
		}
	case EventStop:
		return StateStop
	}
	return state
}
