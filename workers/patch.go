package workers

import (
	"fmt"
	"os"
	"time"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/executor/diazotroph/patch"
	"github.com/azolla/azolla/internal/executor/environment"
	"github.com/azolla/azolla/internal/executor/gitops"
	"github.com/azolla/azolla/internal/executor/patchgen"
	"github.com/azolla/azolla/internal/executor/runreport"
)

// NewPatch builds PATCH_DIAZOTROPH from cfg.Patch: every generator that is
// configured (static always), the author and patch policy, and each
// repository's gate commands and push remote, its commands run by ex.
func NewPatch(cfg config.Config, ex *Executors) (*patch.Patch, error) {
	pc := cfg.Patch
	git := gitops.Git{}
	gens := map[string]patchgen.Generator{config.GeneratorStatic: patchgen.NewStatic()}
	unconfigured := map[string]string{}
	if pc.Command.CommandLine() != "" {
		// With a preset the command keeps the preset itself, not only its
		// command line: its parser reads the agent's output.
		var preset *runreport.Preset
		if pc.Command.Preset != "" {
			p, err := runreport.LookupPreset(pc.Command.Preset)
			if err != nil {
				return nil, fmt.Errorf("patch.command.preset: %w", err)
			}
			preset = &p
		}
		gens[config.GeneratorCommand] = patchgen.NewCommand(patchgen.CommandOptions{Run: pc.Command.Run,
			Preset: preset, Executor: ex.PatchCommand, WorktreeDiff: git.WorktreeDiff})
	} else {
		unconfigured[config.GeneratorCommand] = "set patch.command.run to the coding agent's command line, " +
			"or patch.command.preset to claude-code, codex or aider"
	}
	if pc.OpenAI.Model != "" {
		g, err := patchgen.NewOpenAI(openAIOptions(pc.OpenAI, pc.OpenAI.Model))
		if err != nil {
			return nil, fmt.Errorf("patch.openai: %w", err)
		}
		gens[config.GeneratorOpenAI] = g
	} else {
		unconfigured[config.GeneratorOpenAI] = "set patch.openai.model (and base_url, api_key or $OPENAI_API_KEY)"
	}
	return patch.New(patch.Options{Git: git, Dir: cfg.GitDir(), Generators: gens, Default: pc.Generator,
		Unconfigured: unconfigured, Author: gitops.Author{Name: pc.Author.Name, Email: pc.Author.Email},
		Policy:        gitops.PatchPolicy{AllowBinary: pc.AllowBinary, MaxBytes: pc.MaxPatchBytes},
		FileListLimit: pc.FileListLimit, Secrets: ex.Secrets, TranscriptMax: cfg.Executor.TranscriptMax,
		Environments: NewEnvironments(cfg, ex), Fresh: pc.Resume == config.ResumeFresh,
		Settings: func(repo string) patch.Settings {
			r := pc.Repository(repo)
			s := patch.Settings{GateCommands: r.GateCommands, GateBudget: r.GateBudget, PushRemote: r.PushRemote,
				SelectCommand: r.SelectCommand,
				Gate:          ex.Gate(repo)}
			if r.Forge.Enabled() && s.PushRemote == "" {
				// The branch goes where its pull request will be, with the
				// forge's token, which only azolla's git sees.
				s.PushRemote = r.Forge.CloneURL()
				if tok, err := r.Forge.Token(os.Getenv); err != nil {
					s.PushProblem = err.Error()
				} else {
					s.PushAuth = &gitops.HTTPAuth{User: r.Forge.PushUser(), Token: tok}
				}
			}
			return s
		}}), nil
}

// NewEnvironments prepares repositories' environments on this host from
// patch.repositories[].setup, their setups run by ex.
func NewEnvironments(cfg config.Config, ex *Executors) *environment.Manager {
	pc := cfg.Patch
	return &environment.Manager{
		Store:   environmentStore(cfg),
		Config:  func(repo string) environment.Config { return pc.Repository(repo).Setup.Environment() },
		Setup:   ex.Setup,
		Budget:  func(repo string) time.Duration { return pc.Repository(repo).Setup.Budget },
		Environ: ex.Environ,
	}
}

// environmentStore is where this host keeps repositories' environments,
// each repository's capped by its setup.cache_max_mb.
func environmentStore(cfg config.Config) *environment.Store {
	return &environment.Store{Root: cfg.EnvironmentsDir(),
		MaxBytes: func(repo string) int64 { return cfg.Patch.Repository(repo).Setup.MaxBytes() }}
}

// openAIOptions is the openai client of patch.openai asking model: the
// patch generator's and the openai triage route's share its endpoint, key
// and limits.
func openAIOptions(oc config.OpenAIConfig, model string) patchgen.OpenAIOptions {
	return patchgen.OpenAIOptions{BaseURL: oc.BaseURL, Model: model, APIKey: oc.APIKey, TokenParam: oc.TokenParam,
		MaxTokens: oc.MaxTokens, MaxConcurrency: oc.MaxConcurrency, MaxAttempts: oc.MaxAttempts}
}
