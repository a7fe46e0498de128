package devserver

import (
	"context"
	"log/slog"
	"sync/atomic"

	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
)

// minLevelHandler drops records below min before they reach the wrapped
// handler: the Temporal server logs a lot at info level, and callers usually
// want only its warnings and errors.
type minLevelHandler struct {
	slog.Handler
	min slog.Leveler
}

func (h minLevelHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min.Level() && h.Handler.Enabled(ctx, l)
}

func (h minLevelHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return minLevelHandler{Handler: h.Handler.WithAttrs(attrs), min: h.min}
}

func (h minLevelHandler) WithGroup(name string) slog.Handler {
	return minLevelHandler{Handler: h.Handler.WithGroup(name), min: h.min}
}

// stopLevel is the configured level until mute is called, then a level no
// record reaches. Stop mutes the server before stopping it: its services stop
// one after another and log errors for every call the others cancel or
// refuse meanwhile, none of which a user can act on; a failed stop is
// reported by Stop's result instead.
type stopLevel struct {
	configured slog.Leveler
	muted      atomic.Bool
}

func (l *stopLevel) Level() slog.Level {
	if l.muted.Load() {
		return slog.LevelError + 1000
	}
	return l.configured.Level()
}

func (l *stopLevel) mute() { l.muted.Store(true) }

// serverLogger adapts an slog.Logger to the Temporal server's log.Logger.
type serverLogger struct{ l *slog.Logger }

var (
	_ log.Logger      = serverLogger{}
	_ log.WithLogger  = serverLogger{}
	_ log.SLogWrapper = serverLogger{}
)

func (s serverLogger) Debug(msg string, tags ...tag.Tag) { s.log(slog.LevelDebug, msg, tags) }
func (s serverLogger) Info(msg string, tags ...tag.Tag)  { s.log(slog.LevelInfo, msg, tags) }
func (s serverLogger) Warn(msg string, tags ...tag.Tag)  { s.log(slog.LevelWarn, msg, tags) }
func (s serverLogger) Error(msg string, tags ...tag.Tag) { s.log(slog.LevelError, msg, tags) }

// DPanic, Panic and Fatal are logged as errors: an embedded server must not
// panic or exit the host process.
func (s serverLogger) DPanic(msg string, tags ...tag.Tag) { s.log(slog.LevelError, msg, tags) }
func (s serverLogger) Panic(msg string, tags ...tag.Tag)  { s.log(slog.LevelError, msg, tags) }
func (s serverLogger) Fatal(msg string, tags ...tag.Tag)  { s.log(slog.LevelError, msg, tags) }

func (s serverLogger) With(tags ...tag.Tag) log.Logger {
	return serverLogger{l: slog.New(s.l.Handler().WithAttrs(attrs(tags)))}
}

// SLog lets the server's internal SDK clients log through the same handler.
func (s serverLogger) SLog() *slog.Logger { return s.l }

func (s serverLogger) log(level slog.Level, msg string, tags []tag.Tag) {
	ctx := context.Background()
	if s.l.Enabled(ctx, level) {
		s.l.LogAttrs(ctx, level, msg, attrs(tags)...)
	}
}

func attrs(tags []tag.Tag) []slog.Attr {
	out := make([]slog.Attr, len(tags))
	for i, t := range tags {
		out[i] = slog.Any(t.Key(), t.Value())
	}
	return out
}
