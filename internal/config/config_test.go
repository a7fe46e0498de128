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

func TestClaimConfigJSONUsesDurationStrings(t *testing.T) {
	t.Parallel()
	data, err := json.Marshal(config.ClaimConfig{LeaseTTL: 90 * time.Second})
	require.NoError(t, err)
	require.JSONEq(t, `{"lease_ttl":"1m30s"}`, string(data))

	var back config.ClaimConfig
	require.NoError(t, json.Unmarshal(data, &back))
	require.Equal(t, 90*time.Second, back.LeaseTTL)
}

func TestPatchConfigJSONUsesDurationStrings(t *testing.T) {
	t.Parallel()
	p := config.Default().Patch
	require.Equal(t, 168*time.Hour, p.Retention, "a week by default")
	require.Equal(t, time.Hour, p.GCInterval)
	p.Retention, p.GCInterval = 36*time.Hour, 90*time.Minute
	data, err := json.Marshal(p)
	require.NoError(t, err)
	var fields map[string]any
	require.NoError(t, json.Unmarshal(data, &fields))
	require.Equal(t, "36h0m0s", fields["retention"])
	require.Equal(t, "1h30m0s", fields["gc_interval"])
	require.Equal(t, "static", fields["generator"], "the other keys are still there")

	var back config.PatchConfig
	require.NoError(t, json.Unmarshal(data, &back))
	require.Equal(t, p, back)
	require.ErrorContains(t, json.Unmarshal([]byte(`{"retention":"a week","gc_interval":"1h"}`), &back), "patch.retention")
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
