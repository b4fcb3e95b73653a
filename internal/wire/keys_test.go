package wire

import (
	"fmt"
	"testing"
)

// TestNodeIDTokenIsDocumented pins the documented mapping and every
// subject and key: those written by one version are found by the next.
func TestNodeIDTokenIsDocumented(t *testing.T) {
	for id, want := range map[string]string{"db1.example.com": "db1=example=com", "node-1": "node-1", "a_b.c-d": "a_b=c-d"} {
		if got := NodeIDToken(id); got != want {
			t.Errorf("NodeIDToken(%q) = %q, want %q", id, got, want)
		}
		if back, err := NodeIDFromToken(want); err != nil || back != id {
			t.Errorf("NodeIDFromToken(%q) = %q, %v", want, back, err)
		}
	}
	if got := NodeControlSubject("orders", "db1.example.com"); got != "cluster.orders.control.db1=example=com.stepdown" {
		t.Errorf("NodeControlSubject = %q", got)
	}
	for got, want := range map[string]string{
		CooldownKey("db1.example.com"):             "cooldown-db1=example=com",
		MemberKey("db1.example.com"):               "member.db1=example=com",
		MemberKeys:                                 "member.*",
		LeaseKey:                                   "lease",
		BucketName("orders"):                       "cluster-orders",
		MembersBucketName("orders"):                "members-orders",
		ControlSubject("orders"):                   "cluster.orders.control.stepdown",
		StatusSubject("orders", "db1.example.com"): "cluster.orders.status.db1=example=com",
		ClusterStatusSubject("orders"):             "cluster.orders.status",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	for _, bad := range []string{"", "a.b", "=a", "a=", "a==b", "a b", "*"} {
		if id, err := NodeIDFromToken(bad); err == nil {
			t.Errorf("NodeIDFromToken(%q) = %q, want an error", bad, id)
		}
	}
}

// A host name is a valid NodeID; in subjects and keys it is written as its
// token, which gives the NodeID back.
func ExampleNodeIDToken() {
	fmt.Println(CheckNodeID("NodeID", "db1.example.com"))
	fmt.Println(NodeIDToken("db1.example.com"))
	fmt.Println(NodeControlSubject("orders", "db1.example.com"))
	fmt.Println(CooldownKey("db1.example.com"))
	id, err := NodeIDFromToken("db1=example=com")
	fmt.Println(id, err)
	fmt.Println(CheckNodeID("NodeID", "db1..example.com"))
	// Output:
	// <nil>
	// db1=example=com
	// cluster.orders.control.db1=example=com.stepdown
	// cooldown-db1=example=com
	// db1.example.com <nil>
	// cluster: invalid config: NodeID "db1..example.com" has an empty label at byte 4; dots only go between labels
}

// TestNodeIDTokenIsInjective checks every string of up to five characters
// over an alphabet that holds each kind of character the rules treat
// apart (a label byte, '-', '_', '.', the token's '=', a wildcard): no two
// valid NodeIDs share a token, every token gives its NodeID back, and
// NodeIDFromToken accepts exactly the tokens of valid NodeIDs.
func TestNodeIDTokenIsInjective(t *testing.T) {
	const alphabet = "a-_.=*"
	owner := map[string]string{} // token -> NodeID
	var all []string
	var grow func(prefix string)
	grow = func(prefix string) {
		all = append(all, prefix)
		if len(prefix) < 5 {
			for _, c := range alphabet {
				grow(prefix + string(c))
			}
		}
	}
	grow("")
	for _, s := range all {
		if CheckNodeID("NodeID", s) != nil {
			continue
		}
		tok := NodeIDToken(s)
		if prev, ok := owner[tok]; ok {
			t.Fatalf("NodeIDs %q and %q share the token %q", prev, s, tok)
		}
		owner[tok] = s
	}
	for _, s := range all {
		id, err := NodeIDFromToken(s)
		want, isToken := owner[s]
		if (err == nil) != isToken || id != want {
			t.Errorf("NodeIDFromToken(%q) = %q, %v; want %q (a token: %v)", s, id, err, want, isToken)
		}
	}
	if len(owner) < 100 {
		t.Fatalf("only %d valid NodeIDs enumerated", len(owner))
	}
}
