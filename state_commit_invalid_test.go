package cluster

import (
	"errors"
	"github.com/ozanturksever/go-cluster/state"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/fenced"
)

// A Commit that cannot be one atomic batch fails before anything is sent,
// each case with state.ErrInvalidCommit (a malformed key with state.ErrInvalidKey),
// and the message says which.
func TestStateCommitInvalidBatches(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	leader := startNode(t, testConfig(id, "a", srv.URL()), rec, nil)
	waitOneLeader(t, []*Node{leader}, 15*time.Second)
	st := leader.State()
	if err := st.EnableCommit(ctx(t)); err != nil {
		t.Fatal(err)
	}
	tooMany := make([]state.Write, fenced.MaxCommitWrites+1)
	for i := range tooMany {
		tooMany[i] = state.Write{Key: "k." + strconv.Itoa(i), Value: []byte("v")}
	}
	cases := []struct {
		name   string
		writes []state.Write
		want   error
		says   string
	}{
		{"no writes", nil, state.ErrInvalidCommit, "no writes"},
		{"too many writes", tooMany, state.ErrInvalidCommit, strconv.Itoa(fenced.MaxCommitWrites+1) + " writes"},
		{"a key twice", []state.Write{{Key: "a", Value: []byte("1")}, {Key: "b"}, {Key: "a", Delete: true}}, state.ErrInvalidCommit, `"a" written twice`},
		{"a malformed key", []state.Write{{Key: "a"}, {Key: "b c"}}, state.ErrInvalidKey, `"b c"`},
	}
	for _, c := range cases {
		_, err := st.Commit(ctx(t), c.writes...)
		if !errors.Is(err, c.want) || !strings.HasPrefix(err.Error(), "state commit: ") || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: Commit = %v, want %v saying %q", c.name, err, c.want, c.says)
		}
		for _, other := range []error{ErrInvalidConfig, state.ErrInvalidKey, state.ErrInvalidCommit} {
			if other != c.want && errors.Is(err, other) {
				t.Errorf("%s: Commit = %v, also wraps %v", c.name, err, other)
			}
		}
	}
	if keys, err := st.Keys(ctx(t), ""); err != nil || len(keys) != 0 {
		t.Errorf("Keys after the refused Commits = %v, %v; want none", keys, err)
	}
	if !strings.HasPrefix(state.ErrInvalidCommit.Error(), "cluster: ") {
		t.Errorf("state.ErrInvalidCommit = %q, want the package prefix", state.ErrInvalidCommit)
	}
	// fenced.MaxCommitWrites itself is allowed, and an empty Commit is refused
	// before the node is looked at.
	maxed := make([]fenced.Write, fenced.MaxCommitWrites)
	for i := range maxed {
		maxed[i] = fenced.Write{Key: tooMany[i].Key, Value: tooMany[i].Value}
	}
	if err := fenced.CheckCommit(maxed); err != nil {
		t.Errorf("checkCommit of fenced.MaxCommitWrites writes = %v", err)
	}
	idle, err := NewNode(testConfig(id, "idle", srv.URL()), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := idle.State().Commit(ctx(t)); !errors.Is(err, state.ErrInvalidCommit) {
		t.Errorf("Commit of nothing on a node not started = %v, want state.ErrInvalidCommit", err)
	}
	rec.check(t)
}
