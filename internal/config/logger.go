package config

import (
	"io"
	"log/slog"

	"github.com/azolla/azolla/internal/executor/redact"
)

// Logger returns a logger writing to w at log.level in log.format, with
// the configuration's secrets (Secrets) redacted from every line. Values
// Validate would refuse fall back to info and text rather than failing,
// so a logger is always available to report the config error itself.
func (c Config) Logger(w io.Writer) *slog.Logger {
	return c.logger(w, c.level())
}

// LoggerAtLeast is Logger with its level raised to min when log.level is
// below it: for chatty libraries a command should only hear problems from
// (the Temporal SDK logs at info on every dial), still in log.format.
func (c Config) LoggerAtLeast(w io.Writer, min slog.Level) *slog.Logger {
	return c.logger(w, max(c.level(), min))
}

func (c Config) level() slog.Level {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.Log.Level)); err != nil {
		level = slog.LevelInfo
	}
	return level
}

func (c Config) logger(w io.Writer, level slog.Level) *slog.Logger {
	w = redact.New(c.Secrets()...).Writer(w)
	opts := &slog.HandlerOptions{Level: level}
	if c.Log.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
