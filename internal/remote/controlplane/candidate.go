package controlplane

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/strictjson"
)

// CandidatePayload is a candidate job's payload: the workorder's
// WorkPayload and which of its best-of-N candidates to run
// (docs/patches.md#several-candidates). Like WorkPayload it carries no
// secret and nothing of Temporal's.
type CandidatePayload struct {
	WorkPayload
	// Candidate is the candidate's number, from 1 to the objective's
	// attempts; 0 in a workorder's own job.
	Candidate int `json:"candidate,omitempty"`
}

// NewCandidatePayload is the payload that hands candidate k of req's
// workorder to a remote worker.
func NewCandidatePayload(req diazotroph.Request, k int) CandidatePayload {
	return CandidatePayload{WorkPayload: NewWorkPayload(req), Candidate: k}
}

// DecodeJobPayload reads a diazotroph job's payload, strictly: a
// workorder's own (Candidate 0) or one of its candidates'. It is not
// validated.
func DecodeJobPayload(b []byte) (CandidatePayload, error) {
	var p CandidatePayload
	if err := strictjson.Decode(bytes.NewReader(b), &p); err != nil {
		return CandidatePayload{}, fmt.Errorf("decode payload: %w", err)
	}
	return p, nil
}

// Attempts is how many candidates the payload's workorder runs: its
// objective's attempts (1 when unset).
func (p CandidatePayload) Attempts() int {
	if p.Objective.Attempts == nil {
		return 1
	}
	return *p.Objective.Attempts
}

// Validate checks the work payload, and that the candidate is one of the
// objective's attempts, numbered from 1. A workorder with one attempt
// runs no candidates.
func (p CandidatePayload) Validate() error {
	errs := []error{p.WorkPayload.Validate()}
	if n := p.Attempts(); p.Candidate < 1 || p.Candidate > n || n < 2 {
		errs = append(errs, fmt.Errorf("candidate %d is not one of the objective's %d attempt(s) (numbered from 1, at least 2)",
			p.Candidate, n))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("invalid candidate payload: %w", err)
	}
	return nil
}

// CandidateWorkResult is a candidate job's result: what the candidate's
// run made and what the repository's gate commands said of it, the
// figures the selection compares (patch.Candidate, as it crosses the
// wire).
type CandidateWorkResult struct {
	// Candidate is the payload's number: a result for another is refused.
	Candidate    int    `json:"candidate"`
	Generator    string `json:"generator"`
	RunnerStatus string `json:"runner_status"`
	// Patch is the candidate's diff ("" without one); the local worker
	// delivers the winner from it, not from the remote workspace. Its
	// size and hash are computed again where it is recorded.
	Patch string `json:"patch"`
	// Gate holds each gate command's result, in order.
	Gate       []domain.CandidateGateResult `json:"gate"`
	Report     *domain.RunReport            `json:"report,omitempty"`
	Notes      string                       `json:"notes,omitempty"`
	FinishedAt time.Time                    `json:"finished_at"`
}

// Validate checks that the result is candidate k's and can become its
// record: a runner status of store's, a generator named on one line, and
// when it finished.
func (r CandidateWorkResult) Validate(k int) error {
	var errs []error
	if r.Candidate != k {
		errs = append(errs, fmt.Errorf("candidate %d is not the job's (%d)", r.Candidate, k))
	}
	if !slices.Contains(runnerStatuses, r.RunnerStatus) {
		errs = append(errs, fmt.Errorf("runner_status %q is none of %s", r.RunnerStatus, strings.Join(runnerStatuses, ", ")))
	}
	if strings.TrimSpace(r.Generator) == "" || strings.ContainsAny(r.Generator, "\r\n") {
		errs = append(errs, fmt.Errorf("generator %q is not a name on one line", r.Generator))
	}
	if r.FinishedAt.IsZero() {
		errs = append(errs, errors.New("finished_at is missing"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("invalid candidate result: %w", err)
	}
	return nil
}
