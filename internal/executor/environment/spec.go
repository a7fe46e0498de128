package environment

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
)

// Config is a repository's setup as configured (patch.repositories[].setup).
type Config struct {
	// Preset is auto (""), none, or a built-in preset's name.
	Preset string
	// Commands replace the preset's setup commands when set.
	Commands []string
	// Caches are further directories setup fills, each pointed at by its
	// Env variable.
	Caches []Cache
	// KeyFiles are further files of the root the environment depends on.
	KeyFiles []string
	// FromRepository runs the repository's own .azolla/setup.sh, read from
	// the base commit, after the preset's commands.
	FromRepository bool
	// Env is set in setup only: it is part of what the environment is
	// (the key), unlike the worker's variables setup is passed.
	Env map[string]string
}

// RepositoryScript is the setup a repository may carry, run when its
// configuration trusts it (setup.from_repository).
const RepositoryScript = ".azolla/setup.sh"

// Tree is the base commit, as setup reads it.
type Tree interface {
	// Root lists the names at the repository's root.
	Root(ctx context.Context) ([]string, error)
	// Read returns a file's content at the commit; an error wrapping
	// ErrNoFile when there is none.
	Read(ctx context.Context, path string) ([]byte, error)
}

// ErrNoFile is what a Tree's Read wraps for a path the commit lacks.
var ErrNoFile = errors.New("no such file")

// Spec is one repository's environment at one base commit, resolved.
type Spec struct {
	// Preset is the preset's name, PresetCustom for configured commands
	// alone, PresetNone for no environment.
	Preset   string
	Commands []string
	Warm     []string
	Caches   []Cache
	Env      map[string]string
	RunEnv   map[string]string
	SetupEnv map[string]string
	PassEnv  []string
	Path     []string
	Links    map[string]string
	Keep     map[string]string
	// KeyFiles are the key files found, by path, with their contents.
	KeyFiles map[string][]byte
	// Script is .azolla/setup.sh at the base commit when the
	// configuration trusts it; nil otherwise.
	Script []byte
	// Key names the environment: a hash of all of the above.
	Key string
}

// None says there is nothing to prepare.
func (s Spec) None() bool { return s.Preset == PresetNone }

// Resolve works out the environment of cfg on the base commit tree.
func Resolve(ctx context.Context, cfg Config, tree Tree) (Spec, error) {
	root, err := tree.Root(ctx)
	if err != nil {
		return Spec{}, fmt.Errorf("list the base commit's root: %w", err)
	}
	name := cfg.Preset
	if name == "" || name == PresetAuto {
		name = detect(root)
	}
	var p Preset
	switch name {
	case "", PresetNone:
		p = Preset{Name: PresetNone}
	default:
		if p, err = Lookup(name); err != nil {
			return Spec{}, err
		}
		if p.Name == PresetNode {
			p = nodePreset(p, root)
		}
	}
	s := Spec{Preset: p.Name, Commands: slices.Clone(p.Commands), Warm: slices.Clone(p.Warm),
		Caches: slices.Clone(p.Caches), Env: maps.Clone(p.Env), RunEnv: maps.Clone(p.RunEnv),
		SetupEnv: maps.Clone(p.SetupEnv), PassEnv: slices.Clone(p.PassEnv), Path: slices.Clone(p.PathPrefix),
		Links: maps.Clone(p.Links), Keep: maps.Clone(p.Keep), KeyFiles: map[string][]byte{}}
	if len(cfg.Commands) > 0 {
		s.Commands, s.Warm = slices.Clone(cfg.Commands), nil
	}
	s.Caches = append(s.Caches, cfg.Caches...)
	if s.SetupEnv == nil {
		s.SetupEnv = map[string]string{}
	}
	maps.Copy(s.SetupEnv, cfg.Env)
	if cfg.FromRepository {
		b, err := tree.Read(ctx, RepositoryScript)
		switch {
		case errors.Is(err, ErrNoFile):
		case err != nil:
			return Spec{}, fmt.Errorf("read %s at the base commit: %w", RepositoryScript, err)
		default:
			s.Script = b
		}
	}
	if s.Preset == PresetNone && (len(s.Commands) > 0 || s.Script != nil) {
		s.Preset = PresetCustom
	}
	if s.Preset == PresetNone {
		return s, nil
	}
	for _, pattern := range slices.Concat(p.KeyFiles, cfg.KeyFiles) {
		for _, f := range root {
			if ok, _ := path.Match(pattern, f); !ok || s.KeyFiles[f] != nil {
				continue
			}
			b, err := tree.Read(ctx, f)
			if errors.Is(err, ErrNoFile) {
				continue // a directory of that name
			}
			if err != nil {
				return Spec{}, fmt.Errorf("read key file %s at the base commit: %w", f, err)
			}
			s.KeyFiles[f] = b
		}
	}
	s.Key = s.key()
	return s, nil
}

// key hashes everything the environment is made of. The worker's
// variables setup is passed (PassEnv) are not in it: they say where to
// fetch from, not what is fetched.
func (s Spec) key() string {
	h := sha256.New()
	doc, _ := json.Marshal(struct {
		V                     int
		Preset                string
		Commands, Warm        []string
		Caches                []Cache
		Env, RunEnv, SetupEnv map[string]string
		Path                  []string
		Links, Keep           map[string]string
		Script                []byte
		KeyFiles              []string
	}{V: 1, Preset: s.Preset, Commands: s.Commands, Warm: s.Warm, Caches: s.Caches, Env: s.Env, RunEnv: s.RunEnv,
		SetupEnv: s.SetupEnv, Path: s.Path, Links: s.Links, Keep: s.Keep, Script: s.Script,
		KeyFiles: slices.Sorted(maps.Keys(s.KeyFiles))})
	h.Write(doc)
	for _, f := range slices.Sorted(maps.Keys(s.KeyFiles)) {
		sum := sha256.Sum256(s.KeyFiles[f])
		fmt.Fprintf(h, "\x00%s\x00%x", f, sum)
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// Describe names the environment in one line: preset, key files and key.
func (s Spec) Describe() string {
	if s.None() {
		return "no environment"
	}
	files := slices.Sorted(maps.Keys(s.KeyFiles))
	if len(files) == 0 {
		return fmt.Sprintf("%s environment %s", s.Preset, s.Key[:12])
	}
	return fmt.Sprintf("%s environment %s (from %s)", s.Preset, s.Key[:12], strings.Join(files, ", "))
}
