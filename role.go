package cluster

// Role is what a node currently is in its cluster.
type Role int

const (
	// RolePassive is a standby node: it follows the leader and campaigns when
	// the lease is released or expires.
	RolePassive Role = iota
	// RolePrimary is the node that holds the lease: the leader.
	RolePrimary
)

// String returns "PASSIVE", "PRIMARY", or "UNKNOWN".
func (r Role) String() string {
	switch r {
	case RolePassive:
		return "PASSIVE"
	case RolePrimary:
		return "PRIMARY"
	default:
		return "UNKNOWN"
	}
}

// IsPrimary reports whether r is RolePrimary.
func (r Role) IsPrimary() bool { return r == RolePrimary }

// IsPassive reports whether r is RolePassive.
func (r Role) IsPassive() bool { return r == RolePassive }
