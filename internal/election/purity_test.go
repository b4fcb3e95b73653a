package election

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestMachineIsPure holds the election machine (every non-test file of
// this package) to what makes it a pure state machine that the simulator
// can drive: it imports nothing that does I/O or synchronises, reads no
// clock, arms no timer, draws from no global random source (only from
// the machine's own, seeded: a seed replays), uses no channel and starts
// no goroutine. Every decision in it is then a function
// of the events and the now the driver hands it.
func TestMachineIsPure(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		checked++
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range impurities(fset, f) {
			t.Error(p)
		}
	}
	if checked < 5 {
		t.Fatalf("checked %d files of the package; the glob found %v", checked, files)
	}
}

// TestMachinePurityCheckFails is the check's negative control: a file with
// each kind of impurity is caught once per kind.
func TestMachinePurityCheckFails(t *testing.T) {
	const src = `package election
import (
	"sync"
	"time"
	mrand "math/rand/v2"
	"github.com/nats-io/nats.go"
)
var mu sync.Mutex
var _ = nats.Connect
var own = mrand.New(mrand.NewPCG(1, 2))
func f(c chan int) time.Time {
	go func() {}()
	c <- 1
	<-c
	_ = own.IntN(3) + mrand.IntN(3)
	return time.Now()
}`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "impure.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(impurities(fset, f), "\n")
	for _, want := range []string{`imports "sync"`, `imports "github.com/nats-io/nats.go"`, "a go statement", "a channel send",
		"a channel receive", "a channel type", "time.Now", "rand.IntN"} {
		if !strings.Contains(got, want) {
			t.Errorf("the check missed %q; it found:\n%s", want, got)
		}
	}
}

// impurities lists what in f a pure state machine must not have.
func impurities(fset *token.FileSet, f *ast.File) []string {
	forbiddenImports := []string{"github.com/nats-io", "sync", "context", "net", "os", "io", "runtime", "unsafe", "crypto"}
	// Of math/rand and math/rand/v2, only what makes a source of the
	// machine's own: their package functions draw from the global one.
	allowedRand := map[string]bool{"New": true, "NewPCG": true, "NewChaCha8": true, "NewSource": true,
		"Rand": true, "Source": true, "PCG": true, "ChaCha8": true}
	randNames := map[string]bool{}
	// The clock and timers of package time; its types and arithmetic
	// (time.Time, time.Duration, t.Add, t.Sub) are what the machine works in.
	forbiddenTime := map[string]bool{"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true,
		"AfterFunc": true, "NewTimer": true, "NewTicker": true, "Tick": true}
	var out []string
	bad := func(n ast.Node, format string, args ...any) {
		out = append(out, fmt.Sprintf("%s: %s", fset.Position(n.Pos()), fmt.Sprintf(format, args...)))
	}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if path == "math/rand" || path == "math/rand/v2" {
			name := "rand"
			if imp.Name != nil {
				name = imp.Name.Name
			}
			randNames[name] = true
		}
		for _, b := range forbiddenImports {
			if path == b || strings.HasPrefix(path, b+"/") {
				bad(imp, "imports %q: the machine does no I/O and takes no lock", path)
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			bad(n, "a go statement: the machine starts no goroutine")
		case *ast.SelectorExpr:
			id, ok := n.X.(*ast.Ident)
			switch {
			case !ok:
			case id.Name == "time" && forbiddenTime[n.Sel.Name]:
				bad(n, "time.%s: the machine reads no clock and arms no timer; the driver passes now", n.Sel.Name)
			case randNames[id.Name] && !allowedRand[n.Sel.Name]:
				bad(n, "rand.%s: the global random source; the machine draws from its own (m.rnd), seeded", n.Sel.Name)
			}
		case *ast.SendStmt:
			bad(n, "a channel send: the machine returns actions instead")
		case *ast.UnaryExpr:
			if n.Op == token.ARROW {
				bad(n, "a channel receive: the machine is handed events instead")
			}
		case *ast.ChanType:
			bad(n, "a channel type: the machine is handed events instead")
		}
		return true
	})
	return out
}
