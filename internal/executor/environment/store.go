package environment

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"
)

// DefaultMaxBytes is a repository's environments' size cap when none is
// configured (setup.cache_max_mb).
const DefaultMaxBytes int64 = 10 << 30

// Store keeps the environments of this host under Root.
type Store struct {
	Root string
	// MaxBytes is a repository's cap; nil or 0: DefaultMaxBytes.
	MaxBytes func(repository string) int64
}

// meta is an environment's meta.json: written last, it says the
// environment is ready; its modification time is when it was last used.
type meta struct {
	Key          string    `json:"key"`
	Preset       string    `json:"preset"`
	Repository   string    `json:"repository"`
	BuiltAt      time.Time `json:"built_at"`
	BuildSeconds float64   `json:"build_seconds"`
	Bytes        int64     `json:"bytes"`
	// WarmNote says what of the warm-up failed; "" when all of it ran.
	WarmNote string `json:"warm_note,omitempty"`
}

const metaFile = "meta.json"

// repositoryDir is where repository's environments are.
func (s *Store) repositoryDir(repository string) string {
	sum := sha256.Sum256([]byte(repository))
	return filepath.Join(s.Root, hex.EncodeToString(sum[:8]))
}

// Env is a ready environment, held in use until Close.
type Env struct {
	Spec Spec
	// Dir is the environment's directory; "" when there is none.
	Dir string
	// Warm: it was ready when asked for; Built is how long building took
	// otherwise.
	Warm  bool
	Built time.Duration
	// WarmNote says what of the warm-up failed when it was built.
	WarmNote string

	layers string
	lock   *os.File
}

// CacheDir is where the environment keeps cache name.
func (e *Env) CacheDir(name string) string { return filepath.Join(e.Dir, "caches", name) }

// Close ends this use of the environment.
func (e *Env) Close() error {
	if e == nil || e.lock == nil {
		return nil
	}
	err := e.lock.Close() // and with it the shared lock
	e.lock = nil
	return err
}

// Note says, for a run's notes, which environment the run had and whether
// it was warm.
func (e *Env) Note() string {
	switch {
	case e == nil || e.Spec.None():
		return "environment: none (no preset fits the repository and no setup is configured)"
	case e.Warm:
		return "environment warm: " + e.Spec.Describe()
	}
	s := fmt.Sprintf("environment built in %s: %s", e.Built.Round(10*time.Millisecond), e.Spec.Describe())
	if e.WarmNote != "" {
		s += "; " + e.WarmNote
	}
	return s
}

// build fills an environment's directory; it returns what of the warm-up
// failed, "" for nothing.
type build func(ctx context.Context, dir string) (warmNote string, err error)

// Ensure returns the environment of spec for repository, ready: found, or
// built by b under the key's lock, which one builder holds at a time while
// every other caller that needs the key waits for it.
func (s *Store) Ensure(ctx context.Context, repository string, spec Spec, b build) (*Env, error) {
	if spec.None() {
		return &Env{Spec: spec, Warm: true}, nil
	}
	repoDir := s.repositoryDir(repository)
	if err := os.MkdirAll(repoDir, 0o700); err != nil {
		return nil, fmt.Errorf("environment of %s: %w", repository, err)
	}
	dir := filepath.Join(repoDir, spec.Key)
	lock, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("environment of %s: %w", repository, err)
	}
	env := &Env{Spec: spec, Dir: dir, layers: filepath.Join(repoDir, "layers"), lock: lock}
	fail := func(err error) (*Env, error) {
		_ = lock.Close()
		return nil, err
	}
	if err := flock(ctx, lock, syscall.LOCK_SH); err != nil {
		return fail(err)
	}
	if m, ok := readMeta(dir); ok {
		env.Warm, env.WarmNote = true, m.WarmNote
		touch(dir)
		return env, nil
	}
	// Not there: build it, or wait for whoever builds it. Builders take
	// the key's build lock, one at a time; the shared lock stays held
	// throughout (the environment is in use: no prune takes it), so a
	// caller that waited finds the first builder's result, never waits
	// on another caller's use.
	build, err := os.OpenFile(dir+".build", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fail(fmt.Errorf("environment of %s: %w", repository, err))
	}
	defer build.Close()
	if err := flock(ctx, build, syscall.LOCK_EX); err != nil {
		return fail(err)
	}
	if m, ok := readMeta(dir); ok {
		env.Warm, env.WarmNote = true, m.WarmNote
	} else if err := s.build(ctx, repository, env, b); err != nil {
		return fail(err)
	}
	touch(dir)
	if !env.Warm {
		s.prune(repository)
	}
	return env, nil
}

// build builds env's directory afresh, holding its build lock.
func (s *Store) build(ctx context.Context, repository string, env *Env, b build) error {
	begin := time.Now()
	if err := os.RemoveAll(env.Dir); err != nil { // what a failed or killed build left
		return fmt.Errorf("clear environment %s: %w", env.Dir, err)
	}
	for _, c := range env.Spec.Caches {
		if err := os.MkdirAll(env.CacheDir(c.Name), 0o755); err != nil {
			return fmt.Errorf("create cache %s: %w", c.Name, err)
		}
	}
	note, err := b(ctx, env.Dir)
	if err != nil {
		_ = os.RemoveAll(env.Dir)
		return err
	}
	env.Built, env.WarmNote = time.Since(begin), note
	m := meta{Key: env.Spec.Key, Preset: env.Spec.Preset, Repository: repository, BuiltAt: time.Now().UTC(),
		BuildSeconds: env.Built.Seconds(), Bytes: diskUsage(env.Dir), WarmNote: note}
	raw, err := json.MarshalIndent(m, "", "  ")
	if err == nil {
		err = os.WriteFile(filepath.Join(env.Dir, metaFile+".tmp"), raw, 0o600)
	}
	if err == nil {
		err = os.Rename(filepath.Join(env.Dir, metaFile+".tmp"), filepath.Join(env.Dir, metaFile))
	}
	if err != nil {
		_ = os.RemoveAll(env.Dir)
		return fmt.Errorf("record environment %s: %w", env.Dir, err)
	}
	return nil
}

func readMeta(dir string) (meta, bool) {
	raw, err := os.ReadFile(filepath.Join(dir, metaFile))
	if err != nil {
		return meta{}, false
	}
	var m meta
	return m, json.Unmarshal(raw, &m) == nil && m.Key != ""
}

// touch marks the environment used now, for the least-recently-used
// eviction.
func touch(dir string) {
	now := time.Now()
	_ = os.Chtimes(filepath.Join(dir, metaFile), now, now)
}

// lockPoll is how often a lock held elsewhere is asked for again.
const lockPoll = 50 * time.Millisecond

// flock takes how on f, waiting while another holds it, until ctx ends.
func flock(ctx context.Context, f *os.File, how int) error {
	t := time.NewTicker(lockPoll)
	defer t.Stop()
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("lock %s: %w", f.Name(), err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for the environment %s: %w", f.Name(), context.Cause(ctx))
		case <-t.C:
		}
	}
}

// Usage is what one repository's environments hold on this host.
type Usage struct {
	Repository   string
	Environments int
	Bytes        int64
	MaxBytes     int64
}

// Prune evicts, in every repository, the environments least recently used
// beyond the repository's cap, passing over those in use; it returns what
// is left, repository by repository.
func (s *Store) Prune() ([]Usage, error) {
	entries, err := os.ReadDir(s.Root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Usage
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if u, ok := s.pruneDir(filepath.Join(s.Root, e.Name()), ""); ok {
			out = append(out, u)
		}
	}
	return out, nil
}

// prune evicts beyond repository's cap.
func (s *Store) prune(repository string) {
	s.pruneDir(s.repositoryDir(repository), repository)
}

// pruneDir evicts the least recently used environments of one repository's
// directory beyond its cap (repository's, when known, else the one its
// environments record).
func (s *Store) pruneDir(repoDir, repository string) (Usage, bool) {
	entries, err := os.ReadDir(repoDir)
	if err != nil {
		return Usage{}, false
	}
	type held struct {
		dir  string
		used time.Time
		meta meta
	}
	var envs []held
	for _, e := range entries {
		dir := filepath.Join(repoDir, e.Name())
		fi, err := os.Stat(filepath.Join(dir, metaFile))
		if !e.IsDir() || err != nil {
			continue
		}
		m, ok := readMeta(dir)
		if !ok {
			continue
		}
		envs = append(envs, held{dir: dir, used: fi.ModTime(), meta: m})
	}
	if len(envs) == 0 {
		return Usage{}, false
	}
	if repository == "" {
		repository = envs[0].meta.Repository
	}
	max := DefaultMaxBytes
	if s.MaxBytes != nil {
		max = cmp.Or(s.MaxBytes(repository), DefaultMaxBytes)
	}
	slices.SortFunc(envs, func(a, b held) int { return b.used.Compare(a.used) }) // newest first
	// The environments in use stay whatever they weigh, and count first:
	// the cap is then filled with the newest of the others, and the rest
	// go. Deciding on use before age keeps the eviction right when two
	// were used within one tick of the file clock.
	u := Usage{Repository: repository, MaxBytes: max}
	var unused []held
	for _, e := range envs {
		lock, free := exclusive(e.dir)
		if !free {
			u.Bytes += e.meta.Bytes
			u.Environments++
			continue
		}
		defer lock.Close()
		unused = append(unused, e)
	}
	for _, e := range unused {
		if u.Bytes+e.meta.Bytes <= max || u.Environments == 0 || !remove(e.dir) {
			u.Bytes += e.meta.Bytes
			u.Environments++
		}
	}
	return u, true
}

// exclusive takes dir's lock if no one uses the environment: the lock
// (closing it releases it) and true, or false when someone does.
func exclusive(dir string) (*os.File, bool) {
	lock, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, false
	}
	if syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		lock.Close()
		return nil, false
	}
	return lock, true
}

// remove deletes an environment whose lock the caller holds.
func remove(dir string) bool {
	// meta.json first: a half-removed environment is not ready.
	_ = os.Remove(filepath.Join(dir, metaFile))
	return os.RemoveAll(dir) == nil
}

// diskUsage is the size of the files under dir.
func diskUsage(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
