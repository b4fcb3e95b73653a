package main

import (
	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// roleWord is how the tables and notes say a health reply's role. The
// reply keeps the specification's words (cluster.Role's strings, the
// health wire format, and the role field of --json): PRIMARY is the
// leader, PASSIVE a follower. Any other role an application set with
// health.Checker.SetRole is shown as it is.
func roleWord(healthRole string) string {
	switch healthRole {
	case cluster.RolePrimary.String():
		return wire.StatusLeader
	case cluster.RolePassive.String():
		return wire.StatusFollower
	default:
		return healthRole
	}
}

// Notes on a member whose own word on leading differs from the lease.
const noteLeadsWithoutLease = "says it leads but does not hold the lease"

// noteHoldsLease is the note on the lease's holder that reports role
// (leader/follower words) instead of leading.
func noteHoldsLease(role string) string {
	if role == "" {
		return "holds the lease but reports no role"
	}
	return "holds the lease but reports " + role
}
