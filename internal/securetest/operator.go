package securetest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
)

// Operator is a NATS operator in JWT mode with a system account and one
// application account (JetStream enabled), resolved from memory. Users of
// the application account get .creds files with Operator.User.
type Operator struct {
	dir      string
	claims   *jwt.OperatorClaims
	opKP     nkeys.KeyPair
	sysPub   string
	acctKP   nkeys.KeyPair
	acctPub  string
	resolver *server.MemAccResolver
}

// NewOperator creates the operator, the system account and the
// application account.
func NewOperator(t testing.TB) *Operator {
	t.Helper()
	o := &Operator{dir: t.TempDir(), resolver: &server.MemAccResolver{}}
	o.opKP = must(t, nkeys.CreateOperator)
	opPub, _ := o.opKP.PublicKey()
	o.claims = jwt.NewOperatorClaims(opPub)
	o.claims.Name = "go-cluster-test"

	sysKP := must(t, nkeys.CreateAccount)
	o.sysPub, _ = sysKP.PublicKey()
	o.claims.SystemAccount = o.sysPub
	sys := jwt.NewAccountClaims(o.sysPub)
	sys.Name = "SYS"
	o.store(t, o.sysPub, sys)

	o.acctKP = must(t, nkeys.CreateAccount)
	o.acctPub, _ = o.acctKP.PublicKey()
	acct := jwt.NewAccountClaims(o.acctPub)
	acct.Name = "APP"
	acct.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: -1, Consumer: -1}
	o.store(t, o.acctPub, acct)
	return o
}

func must(t testing.TB, f func() (nkeys.KeyPair, error)) nkeys.KeyPair {
	t.Helper()
	kp, err := f()
	if err != nil {
		t.Fatal(err)
	}
	return kp
}

func (o *Operator) store(t testing.TB, pub string, c *jwt.AccountClaims) {
	t.Helper()
	token, err := c.Encode(o.opKP)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.resolver.Store(pub, token); err != nil {
		t.Fatal(err)
	}
}

// Account returns the application account's public key (the JetStream
// account name of its streams).
func (o *Operator) Account() string { return o.acctPub }

// Configure sets the server to trust the operator and resolve its accounts
// from memory.
func (o *Operator) Configure(opts *server.Options) {
	opts.TrustedOperators = []*jwt.OperatorClaims{o.claims}
	opts.AccountResolver = o.resolver
	opts.SystemAccount = o.sysPub
}

// User creates a user of the application account with perms (nil: no
// restriction) and writes its .creds file; it returns the file's path.
func (o *Operator) User(t testing.TB, name string, perms *Permissions) string {
	t.Helper()
	ukp := must(t, nkeys.CreateUser)
	upub, _ := ukp.PublicKey()
	uc := jwt.NewUserClaims(upub)
	uc.Name = name
	uc.IssuerAccount = ""
	if perms != nil {
		uc.Pub.Allow.Add(perms.Publish...)
		uc.Sub.Allow.Add(perms.Subscribe...)
		if perms.AllowResponses {
			uc.Resp = &jwt.ResponsePermission{MaxMsgs: 1}
		}
	}
	token, err := uc.Encode(o.acctKP)
	if err != nil {
		t.Fatal(err)
	}
	seed, err := ukp.Seed()
	if err != nil {
		t.Fatal(err)
	}
	creds, err := jwt.FormatUserConfig(token, seed)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(o.dir, name+".creds")
	if err := os.WriteFile(path, creds, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
