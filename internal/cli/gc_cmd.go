package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/azolla/azolla/internal/maintenance/retention"
	"github.com/azolla/azolla/internal/textsafe"
	"github.com/azolla/azolla/workers"
)

func (a *app) gcCmd() *cobra.Command {
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "gc",
		Short: "Prune finished workspaces and gc the repository mirrors now",
		Long: `Run the workspace retention pass that every worker runs each
patch.gc_interval, once, on this machine's git dir (patch.git_dir).

A workspace goes once patch.retention has passed since its objective became
DONE or a retry superseded its workorder, and only if its branch was pushed,
a pause state warned that it would be pruned, or it holds no commit of its
own. The newest workorder of an objective that is not DONE is never pruned.
Directories the store does not account for and symbolic links are reported
and left alone. Then every mirror is git gc'd, and each repository's
environments (what setup prepared) are cut back to setup.cache_max_mb, the
least recently used first, passing over those in use.

Prints what was pruned (with the space freed), what was kept and why, the
orphans and the mirrors; exits 1 if an entry or a mirror could not be
handled (each is left as it was). --dry-run changes nothing and lists what
would go.`,
		Args: cobra.NoArgs,
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "list what would be pruned and gc'd; change nothing")
	a.withSession(cmd, preamble{output: true}, func(cmd *cobra.Command, _ []string, c *call) error {
		// No logger: the report printed below says it all.
		pr, err := workers.NewPruner(c.cfg, c.store, nil)
		if err != nil {
			return configError(err)
		}
		pr.DryRun = dryRun
		rep, err := pr.RunOnce(cmd.Context())
		if err != nil {
			return fmt.Errorf("gc: %w", err)
		}
		if c.json {
			err = writeJSON(cmd.OutOrStdout(), rep)
		} else {
			err = writeGCText(cmd.OutOrStdout(), rep)
		}
		if err != nil {
			return err
		}
		if n := len(rep.Errors); n > 0 {
			return fmt.Errorf("gc: %s; what they concern was left as it was", verifyCount(n, "error"))
		}
		return nil
	})
	return cmd
}

// writeGCText prints one line per entry and mirror, then a summary. Entry
// names come from the disk, details quote ids: both are printed safe.
func writeGCText(w io.Writer, rep retention.Report) error {
	var b strings.Builder
	pruned, gcd := "pruned", "gc"
	if rep.DryRun {
		pruned, gcd = "would prune", "would gc"
	}
	for _, e := range rep.Pruned {
		fmt.Fprintf(&b, "%-12s %s  %s, branch %s, %s\n", pruned, textsafe.Line(e.Name), e.Reason, e.Branch,
			humanBytes(e.Bytes))
	}
	for _, e := range rep.Kept {
		detail := e.Detail
		if e.Reason == retention.Retained && e.PrunableAt != nil {
			detail = "prunable from " + e.PrunableAt.UTC().Format(time.RFC3339) + "; " + detail
		}
		fmt.Fprintf(&b, "%-12s %s  %s: %s\n", "kept", textsafe.Line(e.Name), e.Reason, textsafe.Line(detail))
	}
	for _, e := range rep.Orphans {
		fmt.Fprintf(&b, "%-12s %s  %s: %s; left alone\n", "orphan", textsafe.Line(e.Name), e.Reason,
			textsafe.Line(e.Detail))
	}
	for _, m := range rep.Mirrors {
		if rep.DryRun {
			fmt.Fprintf(&b, "%-12s %s\n", gcd, textsafe.Line(m.Dir))
			continue
		}
		fmt.Fprintf(&b, "%-12s %s  %s freed\n", gcd, textsafe.Line(m.Dir), humanBytes(m.BytesFreed))
	}
	for _, u := range rep.Environments {
		fmt.Fprintf(&b, "%-12s %s  %s, %s of its %s cap\n", "environments", textsafe.Line(u.Repository),
			verifyCount(u.Environments, "environment"), humanBytes(u.Bytes), humanBytes(u.MaxBytes))
	}
	for _, e := range rep.Errors {
		fmt.Fprintf(&b, "%-12s %s\n", "error", textsafe.Line(e))
	}

	verb, mirrors := "pruned", fmt.Sprintf("%s gc'd (%s freed)", verifyCount(len(rep.Mirrors), "mirror"),
		humanBytes(rep.MirrorBytesFreed))
	if rep.DryRun {
		verb, mirrors = "would prune", verifyCount(len(rep.Mirrors), "mirror")+" to gc"
	}
	fmt.Fprintf(&b, "gc: %s %s (%s), kept %d%s, %s left alone, %s, %s\n", verb,
		verifyCount(len(rep.Pruned), "workspace"), humanBytes(rep.BytesFreed), len(rep.Kept), keptBy(rep),
		verifyCount(len(rep.Orphans), "orphan"), mirrors, verifyCount(len(rep.Errors), "error"))
	if rep.DryRun {
		b.WriteString("gc: dry run, nothing was changed\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// keptBy is " (1 ACTIVE, 2 RETAINED)", or "" when nothing was kept.
func keptBy(rep retention.Report) string {
	counts := rep.KeptBy()
	if len(counts) == 0 {
		return ""
	}
	reasons := slices.Sorted(maps.Keys(counts))
	parts := make([]string, len(reasons))
	for i, r := range reasons {
		parts[i] = fmt.Sprintf("%d %s", counts[r], r)
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// humanBytes is n in B, KiB, MiB or GiB.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, suffix := float64(n)/unit, "KiB"
	for _, s := range []string{"MiB", "GiB", "TiB"} {
		if v < unit {
			break
		}
		v, suffix = v/unit, s
	}
	return fmt.Sprintf("%.1f %s", v, suffix)
}
