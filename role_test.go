package cluster

import "testing"

func TestRole(t *testing.T) {
	t.Parallel()
	if RolePrimary.String() != "PRIMARY" || RolePassive.String() != "PASSIVE" || Role(7).String() != "UNKNOWN" {
		t.Errorf("strings: %s %s %s", RolePrimary, RolePassive, Role(7))
	}
	if !RolePrimary.IsPrimary() || RolePrimary.IsPassive() || !RolePassive.IsPassive() || RolePassive.IsPrimary() {
		t.Error("IsPrimary/IsPassive wrong")
	}
}
