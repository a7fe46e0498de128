package giteatest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// Version is the Gitea the tests and forge-dev run. v1.26.0 builds with
// the Go of go.mod; check a newer one against it before moving the pin.
const Version = "v1.26.0"

const giteaModule = "code.gitea.io/gitea"

// assetDirs are what Gitea reads from STATIC_ROOT_PATH when it is built
// without the bindata tag.
var assetDirs = []string{"templates", "options", "public"}

// Install is a built Gitea.
type Install struct {
	// Binary is the gitea executable.
	Binary string
	// StaticRoot is its STATIC_ROOT_PATH: the module's templates, options
	// and public folders.
	StaticRoot string
}

// Build returns the cached build of Version, building it first when it is
// missing; log receives the go command's output while it builds. Callers
// in several processes at once wait for one build.
func Build(ctx context.Context, log io.Writer) (Install, error) {
	cacheDir, err := goEnv(ctx, "GOCACHE")
	if err != nil {
		return Install{}, err
	}
	root := filepath.Join(cacheDir, "azolla-gitea")
	inst := Install{StaticRoot: filepath.Join(root, Version)}
	inst.Binary = filepath.Join(inst.StaticRoot, "gitea")
	if _, err := os.Stat(inst.Binary); err == nil {
		return inst, nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return Install{}, fmt.Errorf("gitea build cache: %w", err)
	}
	unlock, err := lockFile(filepath.Join(root, Version+".lock"))
	if err != nil {
		return Install{}, err
	}
	defer unlock()
	// Another process may have built it while this one waited.
	if _, err := os.Stat(inst.Binary); err == nil {
		return inst, nil
	}
	// Under the lock, a build folder left behind is a killed build's.
	if stale, err := filepath.Glob(filepath.Join(root, "build-*")); err == nil {
		for _, d := range stale {
			_ = os.RemoveAll(d)
		}
	}
	fmt.Fprintf(log, "giteatest: building Gitea %s into %s (minutes, once per machine)\n", Version, inst.StaticRoot)
	if err := build(ctx, root, inst.StaticRoot, log); err != nil {
		return Install{}, fmt.Errorf("build gitea %s: %w", Version, err)
	}
	return inst, nil
}

// build makes dest (binary and assets) in a temporary folder beside it and
// renames it into place, so that dest is either whole or absent.
func build(ctx context.Context, root, dest string, log io.Writer) error {
	tmp, err := os.MkdirTemp(root, "build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	// Outside any module (tmp), so that no go.mod around the caller is
	// read or changed.
	var out bytes.Buffer
	dl := goCommand(ctx, tmp, "mod", "download", "-json", giteaModule+"@"+Version)
	dl.Stdout, dl.Stderr = &out, log
	if err := dl.Run(); err != nil {
		return fmt.Errorf("go mod download: %w", err)
	}
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(out.Bytes(), &mod); err != nil {
		return fmt.Errorf("go mod download: %w", err)
	}
	if mod.Error != "" || mod.Dir == "" {
		return fmt.Errorf("go mod download: %q", mod.Error)
	}

	// The module cache is read-only; build in a writable copy.
	src := filepath.Join(tmp, "src")
	if err := copyTree(mod.Dir, src); err != nil {
		return fmt.Errorf("copy the module: %w", err)
	}
	staged := filepath.Join(tmp, "out")
	gb := goCommand(ctx, src, "build", "-trimpath", "-buildvcs=false",
		"-ldflags", "-s -w -X main.Version="+strings.TrimPrefix(Version, "v"),
		"-o", filepath.Join(staged, "gitea"), ".")
	gb.Stdout, gb.Stderr = log, log
	if err := gb.Run(); err != nil {
		return fmt.Errorf("go build: %w", err)
	}
	for _, d := range assetDirs {
		if err := copyTree(filepath.Join(mod.Dir, d), filepath.Join(staged, d)); err != nil {
			return fmt.Errorf("copy %s: %w", d, err)
		}
	}
	return os.Rename(staged, dest)
}

// goCommand runs the go command in dir with the caller's environment, but
// the module settings of its own: Gitea's go.mod needs -mod=mod, and no
// workspace may apply. The environment is the developer's on purpose: this
// builds a test tool with their Go settings (proxy, caches, toolchain); it
// runs no work and sees no run's input.
func goCommand(ctx context.Context, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	return cmd
}

func goEnv(ctx context.Context, name string) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", name).Output()
	if err != nil {
		return "", fmt.Errorf("go env %s: %w", name, err)
	}
	v := strings.TrimSpace(string(out))
	if v == "" || v == "off" {
		return "", fmt.Errorf("go env %s is %q: the Gitea build is cached there", name, v)
	}
	return v, nil
}

// lockFile holds an exclusive lock on path until unlock; the kernel drops
// it when the process dies, so a killed build never blocks the next one.
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("gitea build lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("gitea build lock: %w", err)
	}
	return func() { _ = f.Close() }, nil
}

// copyTree copies the regular files and folders under src to dst, making
// them writable by their owner.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type().IsRegular():
			return copyFile(path, target)
		default:
			return errors.New("unexpected file type at " + path)
		}
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	info, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, info.Mode().Perm()|0o200)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}
