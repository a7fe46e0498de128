package domain

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinels callers branch on with errors.Is.
var (
	// ErrNotFound: the record does not exist.
	ErrNotFound = errors.New("not found")
	// ErrAlreadyExists: a record with that id exists already.
	ErrAlreadyExists = errors.New("already exists")
	// ErrAlreadyProcessed: the event was processed before; nothing changed.
	ErrAlreadyProcessed = errors.New("event already processed")
	// ErrLeaseLost: the caller no longer holds the claim it acted under.
	ErrLeaseLost = errors.New("lease lost")
	// ErrNotHolder: a release by someone who does not hold the claim.
	ErrNotHolder = errors.New("not the claim holder")
	// ErrInvalidTransition: the objective is not in a status the transition
	// starts from.
	ErrInvalidTransition = errors.New("invalid status transition")
	// ErrInvalid: a record the schema accepts but that contradicts itself
	// (e.g. a pause state with more action kinds than actions).
	ErrInvalid = errors.New("invalid record")
)

// LeaseLostError says which claim was lost and who holds it now (empty when
// the row is gone or released).
type LeaseLostError struct {
	ResourceType string
	ResourceID   string
	OwnerID      string
	ClaimVersion int64
	// HolderID and HolderVersion describe the claim row as found.
	HolderID      string
	HolderVersion int64
}

func (e *LeaseLostError) Error() string {
	return fmt.Sprintf("lease lost on %s %s: %s held version %d, claim is now version %d held by %q",
		e.ResourceType, e.ResourceID, e.OwnerID, e.ClaimVersion, e.HolderVersion, e.HolderID)
}

// Is makes errors.Is(err, ErrLeaseLost) true.
func (e *LeaseLostError) Is(target error) bool { return target == ErrLeaseLost }

// NotHolderError is returned by a release from someone not holding the claim.
type NotHolderError struct {
	ResourceType string
	ResourceID   string
	OwnerID      string
	ClaimVersion int64
}

func (e *NotHolderError) Error() string {
	return fmt.Sprintf("release of %s %s refused: %s does not hold version %d",
		e.ResourceType, e.ResourceID, e.OwnerID, e.ClaimVersion)
}

// Is makes errors.Is(err, ErrNotHolder) true.
func (e *NotHolderError) Is(target error) bool { return target == ErrNotHolder }

// TransitionError is a refused status transition: of an objective, or of
// the record Kind names (a capture taken or processed).
type TransitionError struct {
	// Kind is what ObjectiveID names when it is not an objective
	// ("capture"); "" means an objective.
	Kind        string
	ObjectiveID string
	Current     string
	From        []string
	To          string
}

func (e *TransitionError) Error() string {
	kind := e.Kind
	if kind == "" {
		kind = "objective"
	}
	return fmt.Sprintf("%s %s is %s; moving to %s needs one of %s",
		kind, e.ObjectiveID, e.Current, e.To, strings.Join(e.From, ", "))
}

// ObjectiveTransitionError is the refusal of an objective in current to move
// from one of from to to.
func ObjectiveTransitionError(objectiveID string, current Status, from []Status, to string) *TransitionError {
	names := make([]string, len(from))
	for i, f := range from {
		names[i] = string(f)
	}
	return &TransitionError{ObjectiveID: objectiveID, Current: string(current), From: names, To: to}
}

// Is makes errors.Is(err, ErrInvalidTransition) true.
func (e *TransitionError) Is(target error) bool { return target == ErrInvalidTransition }

// NotFoundError names what was missing; errors.Is(err, ErrNotFound) holds.
type NotFoundError struct {
	Kind string
	ID   string
}

func (e *NotFoundError) Error() string { return fmt.Sprintf("%s %q not found", e.Kind, e.ID) }

// Is makes errors.Is(err, ErrNotFound) true.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }
