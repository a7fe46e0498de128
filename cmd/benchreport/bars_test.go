package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const sample = `goos: linux
BenchmarkClaims-2   	       1	5897910402 ns/op	         0.5286 postgres-acquire-ratio	      3237 postgres-acquire/s	         0.8182 postgres-renew-ratio	         0.7439 sqlite-acquire-ratio	         0.95 sqlite-renew-ratio
PASS
BenchmarkLifecycle-2 1 123 ns/op 0.93 throughput-ratio 1.41 p50-ratio
not a Benchmark line
Benchmark garbage here
`

func TestParse_ReadsEveryMetricOfEveryBenchmark(t *testing.T) {
	m, err := Parse(strings.NewReader(sample))
	require.NoError(t, err)
	require.Equal(t, 0.5286, m["BenchmarkClaims"]["postgres-acquire-ratio"])
	require.Equal(t, 3237.0, m["BenchmarkClaims"]["postgres-acquire/s"])
	require.Equal(t, 1.41, m["BenchmarkLifecycle"]["p50-ratio"])
	require.Len(t, m, 2)
}

func TestReport_SaysMetMissedAndAbsent(t *testing.T) {
	m, err := Parse(strings.NewReader(sample))
	require.NoError(t, err)
	var out strings.Builder
	missed, absent := Report(&out, m, Of(""))
	// Missed: B2 (1.41 > 1.3), B3 postgres (0.53), B4 postgres (0.82).
	require.Equal(t, 3, missed, out.String())
	// A figure for B1, B2 and both B3 and B4 bars; none for the rest.
	require.Equal(t, len(Of(""))-6, absent, out.String())
	require.NotContains(t, out.String(), "I1", "bench-idle's bar is not make bench's")
	lines := strings.Split(out.String(), "\n")
	find := func(id string) string {
		for _, l := range lines {
			if strings.HasPrefix(l, id+" ") {
				return l
			}
		}
		t.Fatalf("no line for %s in\n%s", id, out.String())
		return ""
	}
	require.Contains(t, find("B1"), "0.93")
	require.Contains(t, find("B1"), "met")
	require.Contains(t, find("B2"), "MISSED")
	require.Contains(t, find("B3 sqlite"), "met")
	require.Contains(t, find("B7"), "no figure")
}

func TestGoal_BoundIsInclusive(t *testing.T) {
	require.True(t, Goal{Bound: 0.9}.Met(0.9))
	require.False(t, Goal{Bound: 0.9}.Met(0.89))
	require.True(t, Goal{AtMost: true, Bound: 1.3}.Met(1.3))
	require.False(t, Goal{AtMost: true, Bound: 1.3}.Met(1.31))
}

func TestOf_AMakeTargetReportsItsOwnBars(t *testing.T) {
	m, err := Parse(strings.NewReader("BenchmarkScale-2 1 9 ns/op 0.85 s10k-throughput-ratio 0.62 s10k-rss-per-objective-ratio\n" +
		"BenchmarkTopologyScale-2 1 9 ns/op 0.91 s10k-topology-throughput-ratio\n"))
	require.NoError(t, err)
	var out strings.Builder
	missed, absent := Report(&out, m, Of("bench-scale"))
	require.Equal(t, []int{1, 0}, []int{missed, absent}, out.String())
	require.Regexp(t, `S10k-topology .*>= 0\.80\s+0\.91\s+met`, out.String())
	require.Regexp(t, `S10k RSS .*<= 0\.50\s+0\.62\s+MISSED`, out.String())
	require.Len(t, Of("bench-idle"), 1)
	require.Equal(t, "I1", Of("bench-idle")[0].ID)
	require.Empty(t, Of("bench-nothing"))
}
