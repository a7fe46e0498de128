package controlplane

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/schemas"
)

// Error is a refusal with one of the stable codes of api.go and its HTTP
// status. The Service returns it for everything a caller should branch
// on; Message never carries a lease or bearer token.
type Error struct {
	Status  int
	Code    string
	Message string
	Err     error // the cause, for logs and errors.Is; never sent
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

func (e *Error) Unwrap() error { return e.Err }

func newError(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

func errInvalid(format string, args ...any) *Error {
	return newError(http.StatusBadRequest, CodeInvalid, format, args...)
}

func errForbidden(format string, args ...any) *Error {
	return newError(http.StatusForbidden, CodeForbidden, format, args...)
}

func errNotFound(format string, args ...any) *Error {
	return newError(http.StatusNotFound, CodeNotFound, format, args...)
}

func errLeaseLost(format string, args ...any) *Error {
	return newError(http.StatusConflict, CodeLeaseLost, format, args...)
}

func errStale(format string, args ...any) *Error {
	return newError(http.StatusConflict, CodeStale, format, args...)
}

// asError maps an error of the store, the transport or the schemas to an
// *Error, saying what was being done. Anything unrecognized is the store or
// the transport being unreachable: 503, and the worker retries.
func asError(doing string, err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var ve *schemas.ValidationError
	var le *domain.JobLeaseError
	var se *domain.JobStaleError
	var out *Error
	switch {
	case errors.As(err, &le):
		out = errLeaseLost("%s: %s", doing, le.Reason)
	case errors.As(err, &se):
		out = errStale("%s: %s", doing, se.Reason)
	case errors.Is(err, domain.ErrJobLeaseLost):
		out = errLeaseLost("%s: lease lost", doing)
	case errors.Is(err, domain.ErrJobStale):
		out = errStale("%s: the job moved on", doing)
	case errors.Is(err, domain.ErrLeaseLost):
		// A lifecycle claim held with the job's lease (a hook's) moved on.
		out = errLeaseLost("%s: %v", doing, err)
	case errors.Is(err, domain.ErrInvalid):
		out = errInvalid("%s: %v", doing, err)
	case errors.Is(err, domain.ErrNotFound):
		out = errNotFound("%s: %v", doing, err)
	case errors.As(err, &ve), errors.Is(err, ErrInvalidStream):
		out = errInvalid("%s: %v", doing, err)
	case errors.Is(err, ErrRunGone):
		out = newError(http.StatusConflict, CodeCancelled, "%s: the lifecycle no longer waits for this job: %v; nothing was written",
			doing, runGoneCause(err))
	case errors.Is(err, ErrActivityGone):
		out = newError(http.StatusConflict, CodeCancelled, "%s: the lifecycle no longer waits for this job", doing)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		out = newError(http.StatusServiceUnavailable, CodeUnavailable, "%s: %v", doing, err)
	default:
		out = newError(http.StatusServiceUnavailable, CodeUnavailable, "%s: store or transport unavailable", doing)
	}
	out.Err = err
	return out
}

// runGoneCause is the runGoneError in err's chain, which says which
// verdict, or err itself.
func runGoneCause(err error) error {
	var g *runGoneError
	if errors.As(err, &g) {
		return g
	}
	return err
}
