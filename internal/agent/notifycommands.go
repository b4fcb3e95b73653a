package agent

// notifyCommand is one command a Notify names, with its field's YAML key.
type notifyCommand struct {
	key  string
	argv []string
}

// commands lists every command n names, in file order, so that what
// checks them (Parse, CheckHost) cannot miss one: a field added to Notify
// is added here.
func (n *Notify) commands() []notifyCommand {
	return []notifyCommand{
		{"become_leader", n.BecomeLeader},
		{"lose_leadership", n.LoseLeadership},
		{"leader_change", n.LeaderChange},
		{"fault", n.Fault},
		{"fault_cleared", n.FaultCleared},
		{"state", n.State},
	}
}
