package agent

import (
	"errors"
	"fmt"
	"slices"
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

// newConfigError is the error of problems, in the file's order; nil if
// there are none.
func newConfigError(problems []Problem) error {
	if len(problems) == 0 {
		return nil
	}
	slices.SortStableFunc(problems, func(a, b Problem) int { return a.Line - b.Line })
	return &ConfigError{Problems: problems}
}

// JoinConfigErrors is one *ConfigError with the problems of every
// *ConfigError in errs, in the file's order; nil when there are none.
// Another error becomes a problem of the file as a whole.
func JoinConfigErrors(errs ...error) error {
	var problems []Problem
	for _, err := range errs {
		var ce *ConfigError
		switch {
		case err == nil:
		case errors.As(err, &ce):
			problems = append(problems, ce.Problems...)
		default:
			problems = append(problems, Problem{Msg: err.Error()})
		}
	}
	return newConfigError(problems)
}

// Unwrap returns ErrInvalidConfig.
func (e *ConfigError) Unwrap() error { return ErrInvalidConfig }
