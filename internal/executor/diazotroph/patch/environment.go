package patch

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/executor/environment"
	"github.com/azolla/azolla/internal/executor/gitops"
	"github.com/azolla/azolla/internal/executor/patchgen"
	"github.com/azolla/azolla/internal/executor/sandbox"
)

// baseCommit is the snapshot's commit of a repository, as the environment
// reads it: from the object store of dir (a workspace or a mirror), never
// from a worktree an agent may have changed.
type baseCommit struct {
	git    gitops.Git
	dir    string
	commit string
}

// maxSetupFile bounds what setup reads of one file of the base commit.
const maxSetupFile = 64 << 20

func (b baseCommit) Root(ctx context.Context) ([]string, error) {
	return b.git.ListRoot(ctx, b.dir, b.commit)
}

func (b baseCommit) Read(ctx context.Context, path string) ([]byte, error) {
	out, err := b.git.ReadFile(ctx, b.dir, b.commit, path, maxSetupFile)
	if errors.Is(err, gitops.ErrFileNotFound) {
		return nil, fmt.Errorf("%w: %w", environment.ErrNoFile, err)
	}
	return out, err
}

func (b baseCommit) Export(ctx context.Context, dir string) error {
	return b.git.Export(ctx, b.dir, b.commit, dir)
}

// prepared is an environment in use by one run, and the run's layer of
// it.
type prepared struct {
	env   *environment.Env
	layer *environment.Layer
}

// close ends the run's use of the environment.
func (p *prepared) close() {
	if p == nil {
		return
	}
	_ = p.layer.Close()
	_ = p.env.Close()
}

// extra is what the run's executors add.
func (p *prepared) extra() sandbox.Extra {
	if p == nil || p.layer == nil {
		return sandbox.Extra{}
	}
	return p.layer.Extra
}

// note is what the run's notes say of its environment.
func (p *prepared) note() string {
	if p == nil {
		return ""
	}
	return p.env.Note()
}

// prepareEnvironment makes repository's environment of commit ready on
// this host (dir holds the commit) and a layer of it for work in worktree.
// A setup that fails is a *environment.SetupError.
func (p *Patch) prepareEnvironment(ctx context.Context, repository, dir, commit, worktree string) (*prepared, error) {
	if p.o.Environments == nil {
		return nil, nil
	}
	env, err := p.o.Environments.Prepare(ctx, repository, baseCommit{git: p.o.Git, dir: dir, commit: commit})
	if err != nil {
		return nil, err
	}
	layer, err := env.Layer(ctx, worktree)
	if err != nil {
		_ = env.Close()
		return nil, err
	}
	return &prepared{env: env, layer: layer}, nil
}

// environmentFailed is the outcome of a run whose setup failed: no agent
// ran, nothing was spent, and the gate blocks the objective on its
// environment. The notes' first line is the failure, for the gate's
// reason.
func (r *run) environmentFailed(se *environment.SetupError) diazotroph.Result {
	notes := r.p.o.Secrets.String(se.Report()) + "\n\nThe repository's environment could not be prepared, so no " +
		"agent ran and nothing was spent on it.\n"
	return r.result(domain.RunnerEnvironmentFailed, "", notes, domain.BundleMetadata{BranchName: r.branch})
}

// houseRulesFile is where a repository keeps its instructions for agents.
const houseRulesFile = "AGENTS.md"

// houseRules is the repository's AGENTS.md at the base commit, cut to
// patchgen.MaxHouseRules; "" when it has none or it cannot be read.
func (r *run) houseRules(ctx context.Context) string {
	if h, ok := r.gen.(patchgen.HouseRulesReader); !ok || !h.ReadsHouseRules() {
		return ""
	}
	b, err := r.p.o.Git.ReadFile(ctx, r.ws, r.base, houseRulesFile, maxSetupFile)
	if err != nil {
		return ""
	}
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	if len(s) > patchgen.MaxHouseRules {
		s = strings.ToValidUTF8(s[:patchgen.MaxHouseRules], "") + "\n[... AGENTS.md cut here ...]"
	}
	return s
}
