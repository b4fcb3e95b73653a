package store

// The JetStream API a node reaches: its own account's by default, or that
// of another JetStream domain (a node connected to a leaf node whose
// bucket lives on the hub), or one under an API prefix (an account that
// imports another's JetStream).

import (
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// defaultAPIPrefix is the subject prefix of the JetStream API without a
// domain or prefix.
const defaultAPIPrefix = "$JS.API."

// API says which JetStream API a node uses: Domain or APIPrefix, or
// neither (the connection's own).
type API struct {
	Domain    string
	APIPrefix string
}

// Prefix is the subject prefix of the API's requests, ending in a dot, as
// nats.go builds it.
func (a API) Prefix() string {
	switch {
	case a.Domain != "":
		return "$JS." + a.Domain + ".API."
	case a.APIPrefix != "":
		return strings.TrimSuffix(a.APIPrefix, ".") + "."
	default:
		return defaultAPIPrefix
	}
}

// Open is the JetStream API of nc.
func (a API) Open(nc *nats.Conn) (jetstream.JetStream, error) {
	switch {
	case a.Domain != "":
		return jetstream.NewWithDomain(nc, a.Domain)
	case a.APIPrefix != "":
		return jetstream.NewWithAPIPrefix(nc, a.APIPrefix)
	default:
		return jetstream.New(nc)
	}
}

// PublishSubject is where a message for the stream subject subject is
// published. Behind a domain or prefix the server maps
// "<prefix>$KV.>" to "$KV.>" in the stream's account (a leaf node
// connection does not carry "$KV.>" itself), as nats.go does for a KV put.
func (a API) PublishSubject(subject string) string {
	if p := a.Prefix(); p != defaultAPIPrefix {
		return p + subject
	}
	return subject
}

// Validate checks the domain and prefix: one at most, each usable in a
// subject.
func (a API) Validate() error {
	if a.Domain != "" && a.APIPrefix != "" {
		return fmt.Errorf("%w: JetStreamDomain and JetStreamAPIPrefix are mutually exclusive: set one", wire.ErrInvalidConfig)
	}
	if a.Domain != "" && !subjectToken(a.Domain) {
		return fmt.Errorf("%w: JetStreamDomain %q must be one subject token: no '.', '*', '>' or white space", wire.ErrInvalidConfig, a.Domain)
	}
	if a.APIPrefix != "" {
		for _, tok := range strings.Split(strings.TrimSuffix(a.APIPrefix, "."), ".") {
			if !subjectToken(tok) {
				return fmt.Errorf("%w: JetStreamAPIPrefix %q must be a subject without wildcards, white space or empty tokens", wire.ErrInvalidConfig, a.APIPrefix)
			}
		}
	}
	return nil
}

// subjectToken reports whether s is a non-empty subject token without
// wildcards.
func subjectToken(s string) bool {
	return s != "" && !strings.ContainsAny(s, ".*> \t\r\n\f\v")
}
