package health

import (
	"fmt"
	"log/slog"

	"github.com/nats-io/nats.go"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// Config configures a Checker. ClusterID, NodeID and a way to reach NATS
// (Conn, or NATSURLs) are required.
type Config struct {
	// ClusterID names the cluster. Letters, digits, '-' and '_' only, as in
	// the core (wire.CheckIdentifier).
	ClusterID string
	// NodeID names this node within the cluster, with the rules of
	// wire.CheckNodeID: a host name such as "db1.example.com" is
	// fine. Use the NodeID of the cluster.Node the Checker reports on.
	NodeID string
	// NATSURLs are the servers to connect to when Conn is nil. All of them
	// are used: the client connects to one and fails over to the others.
	NATSURLs []string
	// NATSCredentials is an optional path to a NATS credentials (.creds)
	// file for the connection the Checker dials. Ignored when Conn is set.
	NATSCredentials string
	// Logger receives structured logs. Default slog.Default().
	Logger *slog.Logger

	// Conn is an existing connection to use instead of dialling NATSURLs,
	// typically the one given to cluster.Config.Conn. The Checker does not
	// close it; Stop only removes the Checker's subscriptions.
	Conn *nats.Conn
	// NATSOptions are extra options (TLS, NKey, name, ...) for the
	// connection the Checker dials. Ignored when Conn is set.
	NATSOptions []nats.Option
}

// Validate checks c as NewChecker does. The error wraps ErrInvalidConfig
// and names the field.
func (c Config) Validate() error {
	if err := wire.CheckIdentifier("ClusterID", c.ClusterID); err != nil {
		return fmt.Errorf("health: %w", err)
	}
	if err := wire.CheckNodeID("NodeID", c.NodeID); err != nil {
		return fmt.Errorf("health: %w", err)
	}
	if c.Conn != nil {
		return nil
	}
	if len(c.NATSURLs) == 0 {
		return fmt.Errorf("health: %w: NATSURLs must contain at least one URL (or set Conn)", ErrInvalidConfig)
	}
	for i, u := range c.NATSURLs {
		if u == "" {
			return fmt.Errorf("health: %w: NATSURLs[%d] is empty", ErrInvalidConfig, i)
		}
	}
	return nil
}

// withDefaults returns c with zero fields set to their defaults.
func (c Config) withDefaults() Config {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}
