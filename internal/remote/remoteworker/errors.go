package remoteworker

import (
	"errors"
	"fmt"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/proc"
	"github.com/azolla/azolla/internal/textsafe"
)

// Codes a remote worker fails jobs with (store.JobError.Code).
const (
	// CodeExecutorError: an executor error that says nothing more; retryable.
	CodeExecutorError = "executor_error"
	// CodeWorkerShutdown: the worker was stopped and the job outlived the
	// shutdown grace; retryable.
	CodeWorkerShutdown = "worker_shutdown"
	// CodeInvalidPayload: the payload is not a diazotroph job's.
	CodeInvalidPayload = "invalid_payload"
	// CodeUnknownDiazotroph: this worker runs no diazotroph of the type.
	CodeUnknownDiazotroph = "unknown_diazotroph"
	// CodeDiazotrophError: the diazotroph produced no result (it could not
	// start, or is misconfigured on this worker); another may do better.
	CodeDiazotrophError = "diazotroph_error"
)

// maxMessageBytes bounds a fail request's message.
const maxMessageBytes = 8 << 10

// Failure is an executor error that says how the job failed: the code and
// retryability the fail request carries. An executor error without one is
// CodeExecutorError and retryable: max_attempts bounds the retries.
type Failure struct {
	Code      string
	Retryable bool
	Err       error
}

func (f *Failure) Error() string { return fmt.Sprintf("%s: %v", f.Code, f.Err) }
func (f *Failure) Unwrap() error { return f.Err }

// Permanent marks err as a failure no other attempt can fix.
func Permanent(code string, err error) error { return &Failure{Code: code, Err: err} }

// Retryable marks err as a failure another attempt may not meet.
func Retryable(code string, err error) error { return &Failure{Code: code, Retryable: true, Err: err} }

// jobError is the fail request's error for an executor's err.
func jobError(err error) domain.JobError {
	je := domain.JobError{Code: CodeExecutorError, Retryable: true}
	var f *Failure
	if errors.As(err, &f) {
		je.Code, je.Retryable = textsafe.Line(f.Code), f.Retryable
		if je.Code == "" {
			je.Code = CodeExecutorError
		}
	}
	msg, _ := proc.Sanitize([]byte(err.Error()))
	je.Message = proc.CutAtRune(msg, maxMessageBytes)
	return je
}
