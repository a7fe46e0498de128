// Package schemas holds the JSON Schemas (draft 2020-12) of azolla's records
// and validates record JSON against them. The schema files are the contract
// for the JSON form of the types in internal/store; every write validates the
// record first.
package schemas

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// Kind names one record schema.
type Kind string

// The record kinds, one schema file <kind>.schema.json each.
const (
	Objective               Kind = "objective"
	Event                   Kind = "event"
	ContextSnapshot         Kind = "context_snapshot"
	WorkOrder               Kind = "workorder"
	OutputBundle            Kind = "output_bundle"
	RunRecord               Kind = "run_record"
	PauseState              Kind = "pause_state"
	ClaimRecord             Kind = "claim_record"
	CaptureBuffer           Kind = "capture_buffer"
	Job                     Kind = "job"
	JobAttempt              Kind = "job_attempt"
	JobLease                Kind = "job_lease"
	JobMessage              Kind = "job_message"
	WorkerToken             Kind = "worker_token"
	PullRequest             Kind = "pull_request"
	PullRequestFeedback     Kind = "pull_request_feedback"
	WorkerClaimRequest      Kind = "worker_claim_request"
	WorkerClaimResponse     Kind = "worker_claim_response"
	WorkerHeartbeatRequest  Kind = "worker_heartbeat_request"
	WorkerHeartbeatResponse Kind = "worker_heartbeat_response"
	WorkerCompleteRequest   Kind = "worker_complete_request"
	WorkerCompleteResponse  Kind = "worker_complete_response"
	WorkerFailRequest       Kind = "worker_fail_request"
	WorkerFailResponse      Kind = "worker_fail_response"
	WorkerErrorResponse     Kind = "worker_error_response"
	// TriageProposal is the output of TRIAGE_DIAZOTROPH, not a stored record.
	TriageProposal Kind = "triage_proposal"
	// RunReport is what an executor run says about itself (model, cost,
	// tokens, transcript), written by the executor or parsed by a preset
	// (internal/executor/runreport).
	RunReport Kind = "run_report"
	// Candidate is one of the candidate patches of a best-of-N run.
	Candidate Kind = "candidate"
	// IntakeItem is an item taken from outside the CLI (a forge issue, a
	// posted document); ForgeCommand a command comment acted on.
	IntakeItem   Kind = "intake_item"
	ForgeCommand Kind = "forge_command"
	// IntakeRequest is the document POST /intake takes, not a stored
	// record.
	IntakeRequest Kind = "intake_request"
)

// ErrUnknownKind is wrapped by every error about a kind without a schema.
var ErrUnknownKind = errors.New("unknown schema kind")

// baseURL is the common prefix of the schemas' $id.
const baseURL = "https://azolla.dev/schemas/"

//go:embed *.schema.json
var files embed.FS

var allKinds = []Kind{
	Objective, Event, ContextSnapshot, WorkOrder, OutputBundle, RunRecord,
	PauseState, ClaimRecord, CaptureBuffer, Job, JobAttempt, JobLease,
	JobMessage, WorkerToken, PullRequest, PullRequestFeedback, WorkerClaimRequest, WorkerClaimResponse, WorkerHeartbeatRequest, WorkerHeartbeatResponse, WorkerCompleteRequest, WorkerCompleteResponse, WorkerFailRequest, WorkerFailResponse, WorkerErrorResponse,
	TriageProposal, RunReport, Candidate, IntakeItem, ForgeCommand, IntakeRequest,
}

// compiled holds each kind's schema, compiled on the kind's first
// validation: all of them together take about 40 ms and 10 MB, which a
// command that validates one or two kinds, or none, would pay for nothing.
var compiled = sync.OnceValue(newSchemaSet)

// Kinds returns every kind, sorted.
func Kinds() []Kind {
	ks := slices.Clone(allKinds)
	slices.Sort(ks)
	return ks
}

// ParseKind returns the kind named s.
func ParseKind(s string) (Kind, error) {
	k := Kind(s)
	if slices.Contains(allKinds, k) {
		return k, nil
	}
	names := make([]string, 0, len(allKinds))
	for _, k := range Kinds() {
		names = append(names, string(k))
	}
	return "", fmt.Errorf("%w %q (valid kinds: %s)", ErrUnknownKind, s, strings.Join(names, ", "))
}

// Source returns the raw schema file of kind.
func Source(kind Kind) ([]byte, error) {
	if _, err := ParseKind(string(kind)); err != nil {
		return nil, err
	}
	return files.ReadFile(fileName(kind))
}

// Validate marshals v with encoding/json and validates the result against the
// schema of kind.
func Validate(kind Kind, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("validate %s: marshal: %w", kind, err)
	}
	return ValidateJSON(kind, data)
}

// ValidateJSON validates data against the schema of kind. Schema violations
// are reported as a *ValidationError; data that is not a single JSON value
// yields a plain error saying so.
func ValidateJSON(kind Kind, data []byte) error {
	sch, err := schemaFor(kind)
	if err != nil {
		return err
	}
	doc, err := decode(data)
	if err != nil {
		return fmt.Errorf("validate %s: invalid JSON: %w", kind, err)
	}
	err = sch.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return &ValidationError{Kind: kind, Violations: flatten(ve, doc)}
	}
	return fmt.Errorf("validate %s: %w", kind, err)
}

func schemaFor(kind Kind) (*jsonschema.Schema, error) {
	if _, err := ParseKind(string(kind)); err != nil {
		return nil, err
	}
	return compiled()[kind](), nil
}

func fileName(kind Kind) string { return string(kind) + ".schema.json" }

// newSchemaSet returns, for every kind, a function that compiles its schema
// once, on its first call, and then returns it. The kinds share one
// compiler, which reads an embedded file when a schema first names it, so a
// file that several kinds refer to (defs) is read and compiled once; the
// compiler is not safe for concurrent use, so compiling holds a lock, while
// a compiled schema validates concurrently. The files ship with the binary,
// so a failure is a programming error and panics.
func newSchemaSet() map[Kind]func() *jsonschema.Schema {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.AssertFormat = true
	c.LoadURL = func(url string) (io.ReadCloser, error) {
		if name, ok := strings.CutPrefix(url, baseURL); ok {
			if f, err := files.Open(name); err == nil {
				return f, nil
			}
		}
		return nil, fmt.Errorf("schemas: refusing to load %s: only embedded schemas are available", url)
	}
	var mu sync.Mutex
	set := make(map[Kind]func() *jsonschema.Schema, len(allKinds))
	for _, k := range allKinds {
		set[k] = sync.OnceValue(func() *jsonschema.Schema {
			mu.Lock()
			defer mu.Unlock()
			s, err := c.Compile(baseURL + fileName(k))
			if err != nil {
				panic(fmt.Sprintf("schemas: compile %s: %#v", k, err))
			}
			return s
		})
	}
	return set
}

// decode parses data as exactly one JSON value, keeping numbers exact.
func decode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty input")
		}
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("unexpected data after the top-level value")
	}
	return doc, nil
}
