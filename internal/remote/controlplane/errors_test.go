package controlplane

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
)

// A hook's refusal reaches the worker with the code it calls for: a
// lifecycle claim lost is the lease lost (the worker stops), an invalid
// result is the worker's mistake (it must not retry), and only what is
// unrecognized is "unavailable, retry".
func TestAsError_MapsHookRefusalsToStableCodes(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		err    error
		status int
		code   string
	}{
		{fmt.Errorf("hook: %w", &domain.LeaseLostError{ResourceType: domain.ResourceWorkOrder, ResourceID: "wo-1"}),
			http.StatusConflict, CodeLeaseLost},
		{fmt.Errorf("%w: job j: runner_status is none of OK", domain.ErrInvalid), http.StatusBadRequest, CodeInvalid},
		{&domain.JobLeaseError{JobID: "j", Reason: "wrong lease token"}, http.StatusConflict, CodeLeaseLost},
		{&domain.JobStaleError{JobID: "j", Reason: "job is RUNNING"}, http.StatusConflict, CodeStale},
		{&domain.NotFoundError{Kind: "job", ID: "j"}, http.StatusNotFound, CodeNotFound},
		{errors.New("connection refused"), http.StatusServiceUnavailable, CodeUnavailable},
	} {
		e := asError("complete", tt.err)
		require.Equal(t, tt.status, e.Status, "%v", tt.err)
		require.Equal(t, tt.code, e.Code, "%v", tt.err)
		require.ErrorIs(t, e, tt.err)
	}
}
