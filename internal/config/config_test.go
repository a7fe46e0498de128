package config_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/config"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestDefaultForPicksDataDirFromXDGThenHome(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"xdg wins over home", map[string]string{"XDG_DATA_HOME": "/xdg", "HOME": "/home/u"}, "/xdg/azolla"},
		{"home when xdg unset", map[string]string{"HOME": "/home/u"}, "/home/u/.local/share/azolla"},
		{"relative xdg is ignored", map[string]string{"XDG_DATA_HOME": "rel", "HOME": "/home/u"}, "/home/u/.local/share/azolla"},
		{"empty when neither is set", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, config.DefaultFor(envOf(tt.env)).DataDir)
		})
	}
}

func TestDefaultIsValidAndUsesSQLite(t *testing.T) {
	t.Parallel()
	c := config.DefaultFor(envOf(map[string]string{"HOME": "/home/u"}))
	require.NoError(t, c.Validate())
	require.Equal(t, config.DriverSQLite, c.Store.Driver)
	require.Equal(t, 60*time.Second, c.Claim.LeaseTTL)
	require.Equal(t, "info", c.Log.Level)
	require.Equal(t, "text", c.Log.Format)
}

func TestSQLitePathDefaultsIntoDataDirUnlessSet(t *testing.T) {
	t.Parallel()
	c := config.Config{DataDir: "/data"}
	require.Equal(t, filepath.Join("/data", "azolla.db"), c.SQLitePath())
	c.Store.SQLitePath = "/elsewhere/x.db"
	require.Equal(t, "/elsewhere/x.db", c.SQLitePath())
}

func TestConfigJSONUsesDurationStringsAndReadsBack(t *testing.T) {
	t.Parallel()
	c := config.Default()
	require.Equal(t, 168*time.Hour, c.Patch.Retention, "a week by default")
	require.Equal(t, time.Hour, c.Patch.GCInterval)
	c.Claim.LeaseTTL = 90 * time.Second
	c.Patch.Retention, c.Patch.GCInterval = 36*time.Hour, 90*time.Minute
	data, err := json.Marshal(c)
	require.NoError(t, err)
	var fields struct {
		Claim map[string]any `json:"claim"`
		Patch map[string]any `json:"patch"`
	}
	require.NoError(t, json.Unmarshal(data, &fields))
	require.Equal(t, "1m30s", fields.Claim["lease_ttl"])
	require.Equal(t, "36h0m0s", fields.Patch["retention"])
	require.Equal(t, "1h30m0s", fields.Patch["gc_interval"])
	require.Equal(t, "static", fields.Patch["generator"], "the other keys are still there")

	var back config.Config
	require.NoError(t, json.Unmarshal(data, &back))
	require.Equal(t, c.Claim, back.Claim)
	require.Equal(t, c.Patch.Retention, back.Patch.Retention)
	again, err := json.Marshal(back)
	require.NoError(t, err)
	require.JSONEq(t, string(data), string(again), "what was written reads back to the same configuration")
	err = json.Unmarshal([]byte(`{"patch":{"retention":"a week","gc_interval":"1h"}}`), &back)
	require.ErrorContains(t, err, "a week", "the bad value is named")
}

func TestLoggerHonoursLevelAndFormat(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	c := config.Config{Log: config.LogConfig{Level: "warn", Format: "json"}}
	log := c.Logger(&buf)
	log.Info("hidden")
	log.Warn("shown")
	var rec map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &rec), "one JSON record: %s", buf.String())
	require.Equal(t, "shown", rec["msg"])
}

func TestValidate_PatchResumeIsPartialOrFresh(t *testing.T) {
	c := config.DefaultFor(func(string) string { return "" })
	c.DataDir = t.TempDir()
	require.Equal(t, config.ResumePartial, c.Patch.Resume, "a round resumes by default")
	c.Patch.Resume = "sometimes"
	require.ErrorContains(t, c.Validate(), `patch.resume: must be "partial" or "fresh", got "sometimes"`)
	c.Patch.Resume = config.ResumeFresh
	require.NoError(t, c.Validate())
}
