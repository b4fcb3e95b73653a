package clustertest

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
)

// serverLogger routes an embedded server's log to log/slog, at debug level
// (enable with slog.SetLogLoggerLevel(slog.LevelDebug)). A fatal error (for
// example a port that cannot be bound) is also remembered, so that start-up
// fails at once with the reason instead of timing out: the embedded server
// does not exit on a fatal error, it only logs it. A fatal error after
// start-up, which no caller would see, is logged at error level.
type serverLogger struct {
	name    string
	started atomic.Bool // set once start-up succeeded

	mu    sync.Mutex
	fatal error
}

func (l *serverLogger) log(level slog.Level, format string, v []any) {
	slog.Log(context.Background(), level, fmt.Sprintf(format, v...), "server", l.name)
}

func (l *serverLogger) Noticef(format string, v ...any) { l.log(slog.LevelDebug, format, v) }
func (l *serverLogger) Warnf(format string, v ...any)   { l.log(slog.LevelDebug, format, v) }
func (l *serverLogger) Errorf(format string, v ...any)  { l.log(slog.LevelDebug, format, v) }
func (l *serverLogger) Debugf(format string, v ...any)  { l.log(slog.LevelDebug, format, v) }
func (l *serverLogger) Tracef(format string, v ...any)  { l.log(slog.LevelDebug, format, v) }

func (l *serverLogger) Fatalf(format string, v ...any) {
	err := fmt.Errorf(format, v...)
	level := slog.LevelDebug
	if l.started.Load() {
		level = slog.LevelError
	}
	l.log(level, format, v)
	l.mu.Lock()
	if l.fatal == nil {
		l.fatal = err
	}
	l.mu.Unlock()
}

// err returns the first fatal error logged, if any.
func (l *serverLogger) err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fatal
}
