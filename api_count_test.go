package cluster

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// maxExportedNames bounds the root package's face: the names a newcomer
// reads in one sitting.
const maxExportedNames = 95

// The root package exports at most maxExportedNames names, counted as
// go/doc counts them: functions, types, their methods and constructors,
// and every constant and variable name, typed constants in blocks
// included; and every name of the specification it implements
// (seed 004) is one of them.
func TestExportedNamesAreFewAndTheSpecificationsAreKept(t *testing.T) {
	fs := token.NewFileSet()
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fs, p, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	d, err := doc.NewFromFiles(fs, files, "github.com/ozanturksever/go-cluster")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	values := func(prefix string, vs []*doc.Value) {
		for _, v := range vs {
			for _, n := range v.Names {
				names[prefix+n] = true
			}
		}
	}
	for _, f := range d.Funcs {
		names[f.Name] = true
	}
	values("", d.Consts)
	values("", d.Vars)
	for _, ty := range d.Types {
		names[ty.Name] = true
		for _, f := range ty.Funcs {
			names[f.Name] = true
		}
		for _, m := range ty.Methods {
			names[ty.Name+"."+m.Name] = true
		}
		values("", ty.Consts)
		values("", ty.Vars)
	}
	if len(names) > maxExportedNames {
		t.Errorf("the root package exports %d names, more than %d", len(names), maxExportedNames)
	}
	for _, want := range []string{
		"Config", "Hooks", "NewNode", "Node", "Node.Start", "Node.Stop", "Node.Role", "Node.IsLeader",
		"Node.Leader", "Node.Epoch", "Node.StepDown", "Role", "RolePassive", "RolePrimary",
		"Role.String", "Role.IsPrimary", "Role.IsPassive", "Lease", "Lease.IsExpired", "Lease.IsValid",
		"Lease.TimeUntilExpiry", "ErrLeaseExpired", "ErrEpochMismatch", "ErrNotLeader",
		"ErrAlreadyLeader", "ErrCASFailed", "ErrNotStarted", "ErrAlreadyStarted", "ErrInCooldown",
	} {
		if !names[want] {
			t.Errorf("%s, a name of the specification, is not exported", want)
		}
	}
	t.Logf("%d exported names", len(names))
}
