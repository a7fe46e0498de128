package patch

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/gitops"
)

// A push that fails on the way to the forge is tried again, as many times
// as there are waits; one the forge refuses is not.
func TestPushTrying_TriesAgainOnlyWhatMayPassNextTime(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dropped := &gitops.Error{Args: []string{"push"}, ExitCode: 128, Err: errors.New("exit status 128"),
		Stderr: "fatal: unable to access 'http://forge/app.git/': Empty reply from server"}
	refused := &gitops.Error{Args: []string{"push"}, ExitCode: 128, Err: errors.New("exit status 128"),
		Stderr: "fatal: Authentication failed for 'http://forge/app.git/'"}
	backoff := []time.Duration{0, 0, 0}

	calls := 0
	tries, err := pushTrying(ctx, backoff, func() error {
		calls++
		if calls < 3 {
			return dropped
		}
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, 3, tries)

	calls = 0
	tries, err = pushTrying(ctx, backoff, func() error { calls++; return dropped })
	require.ErrorIs(t, err, dropped)
	require.Equal(t, []int{4, 4}, []int{tries, calls}, "once, then once per wait")

	calls = 0
	tries, err = pushTrying(ctx, backoff, func() error { calls++; return refused })
	require.ErrorIs(t, err, refused)
	require.Equal(t, []int{1, 1}, []int{tries, calls})

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	tries, _ = pushTrying(cancelled, []time.Duration{time.Hour}, func() error { return dropped })
	require.Equal(t, 1, tries, "no wait outlasts the run")
}
