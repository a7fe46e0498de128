package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// ErrCandidatesSettled: the workorder's winning candidate is chosen already,
// so its candidates change no more (docs: issue 31, best-of-N).
var ErrCandidatesSettled = errors.New("candidates settled: a candidate is chosen already")

// ErrCandidateFinished: the candidate's record says how it ended (DONE,
// FAILED, CANCELLED or SKIPPED), and a write would change that: a run
// that ends after the selection cancelled it, say, does not overwrite the
// cancellation.
var ErrCandidateFinished = errors.New("candidate finished: its record says how it ended already")

// CandidateSettled says a candidate's record was refused a write because
// it must stay as it is: the winner is chosen already, or the record says
// how the candidate ended.
func CandidateSettled(err error) bool {
	return errors.Is(err, ErrCandidatesSettled) || errors.Is(err, ErrCandidateFinished)
}

// Candidate statuses.
const (
	CandidateRunning   = "RUNNING"
	CandidateDone      = "DONE"
	CandidateFailed    = "FAILED"
	CandidateCancelled = "CANCELLED"
	CandidateSkipped   = "SKIPPED"
)

// MaxAttempts bounds an objective's attempts and a candidate's number.
const MaxAttempts = 20

// Candidate is one of the N candidate patches a workorder's run makes when
// its objective asks for several attempts. The key is (WorkOrderID,
// Attempt); at most one per workorder is Chosen, and once one is the
// workorder's candidates are settled: no write changes them.
type Candidate struct {
	WorkOrderID string `json:"work_order_id"`
	// Attempt numbers the candidate from 1 (AZOLLA_CANDIDATE).
	Attempt   int    `json:"attempt"`
	Generator string `json:"generator"`
	Status    string `json:"status"`
	// RunnerStatus is how the generator run ended (RunnerOK, ...), "" while
	// it runs or when it never ran.
	RunnerStatus string `json:"runner_status,omitempty"`
	// Patch is the candidate's unified diff; PatchSHA256 its hash, filled
	// in by PutCandidate when left empty.
	Patch       string `json:"patch,omitempty"`
	PatchSHA256 string `json:"patch_sha256,omitempty"`
	// DiffLines is the normalised diff's size in changed lines.
	DiffLines      *int                  `json:"diff_lines,omitempty"`
	GateResults    []CandidateGateResult `json:"gate_results"`
	CommandsPassed int                   `json:"commands_passed"`
	// Report is what the candidate's run reported of itself; it counts in
	// the objective's spend (Spend.AddCandidate).
	Report *RunReport `json:"report,omitempty"`
	// Chosen is set by ChooseCandidate only.
	Chosen     bool       `json:"chosen"`
	Why        string     `json:"why,omitempty"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	UpdatedAt  time.Time  `json:"updated_at"`
}

// CandidateGateResult is what one gate command said of a candidate.
type CandidateGateResult struct {
	Command string `json:"command"`
	Passed  bool   `json:"passed"`
	Detail  string `json:"detail,omitempty"`
}

// PatchSHA256 is the lowercase hex SHA-256 of patch, as a candidate's
// patch_sha256 holds it.
func PatchSHA256(patch string) string {
	sum := sha256.Sum256([]byte(patch))
	return hex.EncodeToString(sum[:])
}

// CheckPatchHash refuses, as ErrInvalid naming /patch_sha256, a hash that
// is not its patch's: the schema cannot compare the two.
func (c *Candidate) CheckPatchHash() error {
	if c.Patch == "" || c.PatchSHA256 == "" {
		return nil
	}
	if got := PatchSHA256(c.Patch); got != c.PatchSHA256 {
		return fmt.Errorf("/patch_sha256: %s is not the SHA-256 of the patch (%s): %w", c.PatchSHA256, got, ErrInvalid)
	}
	return nil
}

// CandidateKey names a candidate in messages: wo-x#2.
func CandidateKey(workOrderID string, attempt int) string {
	return fmt.Sprintf("%s#%d", workOrderID, attempt)
}

// CandidateResource is the resource id of a candidate's CANDIDATE claim:
// its own lease, so that a worker lost mid-candidate costs that
// candidate's attempt only.
func CandidateResource(workOrderID string, attempt int) string {
	return workOrderID + "-c" + strconv.Itoa(attempt)
}
