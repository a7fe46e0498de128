package patchgen

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseRetryAfter_SecondsOrHTTPDate(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		value  string
		want   time.Duration
		wantOK bool
	}{
		{"1", time.Second, true},
		{" 120 ", 2 * time.Minute, true},
		{"0", 0, true},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
		{"99999999999999999999999", maxRetryAfter, true},
		{"9999999999999", maxRetryAfter, true},
		{"", 0, false},
		{"-1", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			t.Parallel()
			got, ok := parseRetryAfter(tt.value, now)
			require.Equal(t, tt.wantOK, ok)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestBackoff_DoublesToACapWithJitterDown(t *testing.T) {
	t.Parallel()
	tests := []struct {
		attempt int
		jitter  float64
		want    time.Duration
	}{
		{1, 0, time.Second},
		{1, 0.5, 750 * time.Millisecond},
		{2, 0, 2 * time.Second},
		{3, 0, 4 * time.Second},
		{6, 0, maxBackoff},
		{7, 0, maxBackoff},
		{1000, 0.5, maxBackoff * 3 / 4},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, backoff(tt.attempt, tt.jitter), "attempt %d jitter %v", tt.attempt, tt.jitter)
	}
	require.Greater(t, backoff(1, 0.999999), time.Second/2)
}
