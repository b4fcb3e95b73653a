package agent

import (
	"context"
	"log/slog"
)

// Messages of the library's log that the agent says better itself.
const (
	// libReadinessFailed is logged at every failed ReadinessCheck, every
	// ReadinessInterval (500 ms at most here) for as long as a check fails
	// or maintenance is on, with failures=N. The agent logs each check's
	// failure and recovery (readiness.record) and the node's turn to not
	// ready with its reason (member.fault) once each.
	libReadinessFailed = "readiness check failed"
	// libDuplicateNodeID is logged by a Start that finds another process
	// with this NodeID. Start returns the error, which the agent logs
	// itself once (startGate), then at most every repeatStartError.
	libDuplicateNodeID = "refusing to start: another process runs with this NodeID"
)

// libraryLog is the handler of the logger the agent gives the library
// (cluster.Config.Logger): it passes every record on to next, the lines
// above demoted to Debug.
type libraryLog struct{ next slog.Handler }

// Enabled reports whether next handles level.
func (h libraryLog) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

// Handle passes r on, at Debug if the agent logs what it says itself.
func (h libraryLog) Handle(ctx context.Context, r slog.Record) error {
	if r.Level > slog.LevelDebug && h.said(r) {
		if !h.next.Enabled(ctx, slog.LevelDebug) {
			return nil
		}
		r.Level = slog.LevelDebug
	}
	return h.next.Handle(ctx, r)
}

// said reports whether the agent logs what r says itself.
func (libraryLog) said(r slog.Record) bool {
	return r.Message == libReadinessFailed || r.Message == libDuplicateNodeID
}

// WithAttrs returns the filter over next's handler with attrs.
func (h libraryLog) WithAttrs(attrs []slog.Attr) slog.Handler {
	return libraryLog{h.next.WithAttrs(attrs)}
}

// WithGroup returns the filter over next's handler with the group.
func (h libraryLog) WithGroup(name string) slog.Handler {
	return libraryLog{h.next.WithGroup(name)}
}
