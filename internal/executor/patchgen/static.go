package patchgen

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrNoStaticPatch means the objective chose the static generator without
// supplying a patch: a misconfiguration no rerun can fix.
var ErrNoStaticPatch = errors.New("objective supplies no static patch")

// Static returns the patch supplied with the objective, unchanged. It is for
// objectives whose change is known in advance, and for testing the rest of
// the lifecycle without a model.
type Static struct{}

var _ Generator = (*Static)(nil)

// NewStatic returns the static generator.
func NewStatic() *Static { return &Static{} }

// Name returns StaticName.
func (*Static) Name() string { return StaticName }

// KeepsWorktree is true: Static only returns the objective's patch.
func (*Static) KeepsWorktree() bool { return true }

// Generate returns in.StaticPatch, or an error wrapping ErrNoStaticPatch if
// there is none.
func (*Static) Generate(ctx context.Context, in Input) (Output, error) {
	if err := context.Cause(ctx); err != nil {
		return Output{}, fmt.Errorf("static patch for objective %s: %w", in.ObjectiveID, err)
	}
	if strings.TrimSpace(in.StaticPatch) == "" {
		return Output{}, fmt.Errorf("static patch for objective %s: %w", in.ObjectiveID, ErrNoStaticPatch)
	}
	return Output{
		Patch: in.StaticPatch,
		Notes: fmt.Sprintf("static patch supplied with the objective (%d bytes)", len(in.StaticPatch)),
	}, nil
}
