package config

import (
	"io"
	"log/slog"
)

// Logger returns a logger writing to w at log.level in log.format. Values
// Validate would refuse fall back to info and text rather than failing,
// so a logger is always available to report the config error itself.
func (c Config) Logger(w io.Writer) *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.Log.Level)); err != nil {
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	if c.Log.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
