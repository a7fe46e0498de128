package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/gitops"
)

// The demo's sample repository: a greeter script the demo patch teaches to
// greet by name.
const (
	demoRepoDir = "demo-repo"
	demoBranch  = "main"
)

var demoFiles = map[string]string{
	"README.md": "# greeter\n\nA sample repository created by `azolla dev --demo`.\n\nRun `sh greet.sh` to be greeted.\n",
	"greet.sh":  "#!/bin/sh\necho \"Hello from azolla's demo repository.\"\n",
}

// demoPatch is the human-written patch the demo objective carries for the
// static generator.
const demoPatch = `diff --git a/README.md b/README.md
--- a/README.md
+++ b/README.md
@@ -3,3 +3,3 @@
 A sample repository created by ` + "`azolla dev --demo`" + `.
 
-Run ` + "`sh greet.sh`" + ` to be greeted.
+Run ` + "`sh greet.sh NAME`" + ` to be greeted by name.
diff --git a/greet.sh b/greet.sh
--- a/greet.sh
+++ b/greet.sh
@@ -1,2 +1,2 @@
 #!/bin/sh
-echo "Hello from azolla's demo repository."
+echo "Hello, ${1:-world}, from azolla's demo repository."
`

// demoRepository returns the sample repository under the data dir, creating
// it with one commit on main the first time.
func demoRepository(ctx context.Context, cfg config.Config) (string, error) {
	dir := filepath.Join(cfg.DataDir, demoRepoDir)
	if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
		return dir, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create the demo repository: %w", err)
	}
	g := gitops.Git{}
	if err := g.Init(ctx, dir, demoBranch); err != nil {
		return "", fmt.Errorf("create the demo repository: %w", err)
	}
	for name, content := range demoFiles {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return "", fmt.Errorf("create the demo repository: %w", err)
		}
	}
	author := gitops.Author{Name: cfg.Patch.Author.Name, Email: cfg.Patch.Author.Email}
	if _, err := g.Commit(ctx, dir, author, "Add the greeter\n"); err != nil {
		return "", fmt.Errorf("create the demo repository: %w", err)
	}
	return dir, nil
}
