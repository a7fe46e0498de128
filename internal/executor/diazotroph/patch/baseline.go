package patch

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/azolla/azolla/internal/executor/sandbox"
)

// A repository's baseline: how its gate commands fare on the base commit
// itself, before any change, in the same environment. When a gate command
// fails on a patch, the baseline says whether it failed there too (the
// patch did not break it) or passed (the patch did), for the gate's reason,
// the pause and the next round's input. It is computed once per base
// commit, environment and gate commands, on the first failure that needs
// it, and kept beside the mirrors:
//
//	baselines/<key>.json   {command: passed}
const baselinesDir = "baselines"

// baseline is what the gate commands did on the base commit, by command.
type baseline map[string]bool

// baselineFor returns the baseline of s's gate commands on base in env
// (nil for none), computing it when it is not kept yet; ok is false when
// it could not be had (it is an explanation, never a verdict).
func (p *Patch) baselineFor(ctx context.Context, s Settings, repository, objectiveID, base string,
	env *prepared) (baseline, bool) {
	envKey := ""
	if env != nil {
		envKey = env.env.Spec.Key
	}
	sum := sha256.Sum256([]byte(strings.Join(append([]string{repository, base, envKey}, s.GateCommands...), "\x00")))
	file := filepath.Join(p.o.Dir, baselinesDir, hex.EncodeToString(sum[:16])+".json")
	if raw, err := os.ReadFile(file); err == nil {
		var b baseline
		if json.Unmarshal(raw, &b) == nil {
			return b, true
		}
	}
	b, err := p.computeBaseline(ctx, s, repository, objectiveID, base, env)
	if err != nil {
		return nil, false
	}
	raw, _ := json.Marshal(b)
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err == nil {
		tmp := file + ".tmp-" + randomSuffix()
		if os.WriteFile(tmp, raw, 0o644) == nil {
			_ = os.Rename(tmp, file)
		}
	}
	return b, true
}

// computeBaseline runs every gate command on a checkout of base.
func (p *Patch) computeBaseline(ctx context.Context, s Settings, repository, objectiveID, base string,
	env *prepared) (baseline, error) {
	mirror, err := p.mirrors.Sync(ctx, repository)
	if err != nil {
		return nil, err
	}
	root := filepath.Join(p.o.Dir, baselinesDir)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(root, "work-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	ws := filepath.Join(dir, "checkout")
	if err := p.o.Git.PrepareWorkspace(ctx, mirror, ws, "azolla-baseline/"+objectiveID, base); err != nil {
		return nil, err
	}
	var x sandbox.Extra
	if env != nil {
		layer, err := env.env.Layer(ctx, ws)
		if err != nil {
			return nil, err
		}
		defer layer.Close()
		x = layer.Extra
	}
	gate, err := s.Gate.With(x)
	if err != nil {
		return nil, err
	}
	run, err := gate.Begin()
	if err != nil {
		return nil, err
	}
	defer run.End()
	bctx, cancel := context.WithTimeoutCause(ctx, s.GateBudget, errGateBudget)
	defer cancel()
	b := baseline{}
	for _, cmd := range s.GateCommands {
		res, err := run.Exec(bctx, sandbox.Command{Line: cmd, Dir: ws, ReadOnly: []string{filepath.Join(ws, ".git")},
			Vars: gateVars(objectiveID, "baseline", "azolla-baseline/"+objectiveID, base)})
		if err != nil && !errors.Is(context.Cause(bctx), errGateBudget) {
			return nil, err
		}
		b[cmd] = err == nil && res.ExitCode == 0 && res.Signal == 0
	}
	return b, nil
}

// says is the sentence the gate's reason adds, after the line naming cmd,
// about cmd's failure.
func (b baseline) says(cmd string) string {
	passed, ok := b[cmd]
	switch {
	case !ok:
		return ""
	case passed:
		return "baseline: it passes on the base commit: the change broke it"
	}
	return "baseline: it fails on the base commit too: it failed before the change"
}

func randomSuffix() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
