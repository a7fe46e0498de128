package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/gitops"
	"github.com/azolla/azolla/internal/store"
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

// The task-management part of the demo: two captures for triage, a
// manifest request, and an objective already past its due date, which the
// deadline monitor finds.
const (
	demoCaptureSource      = "azolla-demo"
	demoOverdueObjectiveID = "demo-overdue"
)

var demoCaptures = []string{
	"Fix the login timeout, urgent\n- Sessions stay open for 30 minutes of inactivity\n- The timeout is configurable\n",
	"Write the release notes for 1.1\n- They list every change since 1.0\n- They say how to upgrade\n",
}

// createTaskDemo writes what the task-management demo needs into the store,
// once per data dir: the captures with their CAPTURE_READY events, a
// MANIFEST_REQUESTED event, and the overdue objective. The poller hands the
// events to the track as soon as the workers run.
func (a *app) createTaskDemo(ctx context.Context, s *session) error {
	all, err := s.store.ListCaptureBuffers(ctx, store.ListCaptureBuffersParams{})
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(all, func(c *domain.CaptureBuffer) bool { return c.Source == demoCaptureSource }) {
		now := store.NowOr(time.Time{})
		err := s.store.InTx(ctx, func(q store.Querier) error {
			for i, text := range demoCaptures {
				at := now.Add(time.Duration(i) * time.Microsecond)
				c := &domain.CaptureBuffer{CaptureBufferID: newCaptureID(at), Source: demoCaptureSource, Content: text,
					Status: domain.CapturePending, CreatedAt: at, UpdatedAt: at}
				if err := q.CreateCaptureBuffer(ctx, c); err != nil {
					return err
				}
				if _, _, err := store.EmitCaptureReady(ctx, q, c.CaptureBufferID, at); err != nil {
					return err
				}
			}
			_, err := store.RequestManifest(ctx, q, "demo", now.Add(time.Millisecond))
			return err
		})
		if err != nil {
			return fmt.Errorf("create the demo captures: %w", err)
		}
	}
	o, err := s.store.GetObjective(ctx, demoOverdueObjectiveID)
	if errors.Is(err, domain.ErrNotFound) {
		due := store.NowOr(time.Time{}).Add(-2 * time.Hour)
		o = &domain.Objective{ObjectiveID: demoOverdueObjectiveID, ObjectiveType: "TICKET",
			Title: "Renew the demo site's TLS certificate", AcceptanceCriteria: []string{"The new certificate is served"},
			Status: domain.StatusNew, Urgency: "HIGH", DueAt: &due}
		if err = s.store.CreateObjective(ctx, o); err != nil {
			return fmt.Errorf("create the demo's overdue objective: %w", err)
		}
	}
	if err != nil {
		return err
	}
	return s.starter.Start(ctx, o)
}
