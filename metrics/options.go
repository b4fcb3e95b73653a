package metrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Option adjusts a Collector made by New.
type Option func(*options)

type options struct {
	namespace   string
	constLabels prometheus.Labels
}

// WithNamespace sets the prefix of every metric name (DefaultNamespace,
// "gocluster", unless set). An empty namespace leaves the names bare
// ("is_leader", ...), which is rarely what you want.
func WithNamespace(namespace string) Option {
	return func(o *options) { o.namespace = namespace }
}

// WithConstLabels adds constant labels to every series (say, "region"),
// besides cluster and node, which New always sets and which labels may not
// name. The map is copied.
func WithConstLabels(labels prometheus.Labels) Option {
	return func(o *options) {
		for k, v := range labels {
			o.constLabels[k] = v
		}
	}
}

// check validates o; the error wraps ErrInvalidConfig.
func (o *options) check() error {
	if o.namespace != "" && !validName(o.namespace) {
		return fmt.Errorf("%w: namespace %q: letters, digits and '_' only, not starting with a digit", ErrInvalidConfig, o.namespace)
	}
	for k := range o.constLabels {
		if k == LabelCluster || k == LabelNode {
			return fmt.Errorf("%w: const label %q is set by New", ErrInvalidConfig, k)
		}
		if !validName(k) || len(k) > 1 && k[0] == '_' && k[1] == '_' {
			return fmt.Errorf("%w: const label %q is not a valid label name", ErrInvalidConfig, k)
		}
	}
	return nil
}

// validName reports whether s is a legacy Prometheus label name:
// [a-zA-Z_][a-zA-Z0-9_]*. Metric names built from it are valid too.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
