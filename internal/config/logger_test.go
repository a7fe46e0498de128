package config_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/config"
)

func TestLoggerAtLeast_RaisesALowerLevelAndKeepsTheFormat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		level, format string
		wantMsgs      []string
	}{
		{"debug", "json", []string{"warn", "error"}},
		{"info", "json", []string{"warn", "error"}},
		{"warn", "text", []string{"warn", "error"}},
		{"error", "json", []string{"error"}},
		{"bogus", "text", []string{"warn", "error"}},
	}
	for _, tt := range tests {
		t.Run(tt.level+"/"+tt.format, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			c := config.Config{Log: config.LogConfig{Level: tt.level, Format: tt.format}}
			log := c.LoggerAtLeast(&buf, slog.LevelWarn)
			log.Debug("debug")
			log.Info("info")
			log.Warn("warn")
			log.Error("error")

			var msgs []string
			for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
				if tt.format == "json" {
					var rec map[string]any
					require.NoError(t, json.Unmarshal([]byte(line), &rec), "a JSON record: %s", line)
					msgs = append(msgs, rec["msg"].(string))
					continue
				}
				require.True(t, strings.HasPrefix(line, "time="), "a text record: %s", line)
				msgs = append(msgs, strings.TrimPrefix(line[strings.Index(line, "msg="):], "msg="))
			}
			require.Equal(t, tt.wantMsgs, msgs)
		})
	}
}

func TestLogger_RedactsTheConfigurationsSecrets(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"text", "json"} {
		var buf bytes.Buffer
		c := config.Config{Log: config.LogConfig{Level: "info", Format: format},
			Store: config.StoreConfig{DSN: "postgres://app:pw-canary-31@db/azolla"}}
		c.Logger(&buf).Info("connect", "dsn", c.Store.DSN, "password", "pw-canary-31")
		require.NotContains(t, buf.String(), "pw-canary-31", format)
		require.Contains(t, buf.String(), "[redacted:store.dsn", format)
	}
}
