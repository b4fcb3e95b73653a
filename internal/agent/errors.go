package agent

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalidConfig is wrapped by every error about a configuration file.
var ErrInvalidConfig = errors.New("invalid agent config")

// Problem is one thing wrong in a configuration file.
type Problem struct {
	File string // the file's path as given
	Path string // the field: "clusters[0].election.lease_ttl"; "" for the file as a whole
	Line int    // 1-based; 0 when unknown
	Msg  string
}

// String is "FILE:LINE: PATH: MSG".
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
	}
	b.WriteString(": ")
	if p.Path != "" {
		b.WriteString(p.Path + ": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// ConfigError lists every problem found in a file, in the file's order.
// It wraps ErrInvalidConfig.
type ConfigError struct {
	Problems []Problem
}

func (e *ConfigError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns ErrInvalidConfig.
func (e *ConfigError) Unwrap() error { return ErrInvalidConfig }
