package cli

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/gitops"
	"github.com/azolla/azolla/internal/lifecycle/inbox"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/textsafe"
	"github.com/azolla/azolla/schemas"
	"github.com/azolla/azolla/starter"
)

func (a *app) objectiveCmd() *cobra.Command {
	return groupCmd("objective", "Create objectives and decide on them",
		a.objectiveCreateCmd(), a.objectiveListCmd(), a.objectiveShowCmd(), a.objectiveWatchCmd(),
		a.decisionCmd("approve", "Approve a NEW objective: it becomes TODO and its work is scheduled"),
		a.decisionCmd("reject", "Reject a NEW objective: its lifecycle ends with a REJECTED pause state"),
		a.decisionCmd("unblock", "Say a BLOCKED objective's blockers are resolved, clear them and re-emit TICKET_READY"),
		a.decisionCmd("retry", "Re-emit TICKET_READY for an objective whose gate failed or that is blocked"),
		a.decisionCmd(answerName, "Answer the question an objective's agent asked: the answer starts its next round"),
		a.objectiveResumeCmd(), a.objectiveBudgetCmd(), a.objectiveLogCmd(), a.objectiveCandidatesCmd())
}

// objectiveFlags are create's flags; --file replaces them all.
type objectiveFlags struct {
	id, title, typ, urgency, due, repository, baseBranch, file string
	generator, patchFile                                       string
	criteria, blockers                                         []string
	budgetUSD                                                  float64
	attempts                                                   int
}

func (a *app) objectiveCreateCmd() *cobra.Command {
	var f objectiveFlags
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create an objective (status NEW) and start its lifecycle",
		Long: `Create an objective from flags, or from a JSON file (--file, "-" for stdin)
holding an objective record; missing fields get the defaults below, and the
record is validated against the objective schema before anything is written.
The objective is stored first, then its lifecycle starts and waits for
approval. If Temporal cannot be reached, the objective stays stored and the
poller starts its lifecycle later.`,
		Args: cobra.NoArgs,
	}
	fl := cmd.Flags()
	fl.StringVar(&f.id, "id", "", "objective id (default: derived from the title)")
	fl.StringVar(&f.title, "title", "", "what is to be done (required without --file)")
	fl.StringArrayVar(&f.criteria, "criteria", nil, "an acceptance criterion (repeatable)")
	fl.StringVar(&f.typ, "type", "TICKET", "objective type: TICKET, TRIAGE or MANIFEST")
	fl.StringVar(&f.urgency, "urgency", "NORMAL", "LOW, NORMAL, HIGH or CRITICAL")
	fl.StringArrayVar(&f.blockers, "blocker", nil, "an unresolved blocker (repeatable)")
	fl.StringVar(&f.due, "due", "", "due time, RFC 3339 with any offset, stored in UTC (e.g. 2026-12-01T17:00:00Z, 2026-12-01T19:00:00+02:00)")
	fl.StringVar(&f.repository, "repository", "", "target repository (path or clone URL)")
	fl.StringVar(&f.baseBranch, "base-branch", "", "target base branch (default: the repository's default branch)")
	fl.StringVar(&f.generator, "generator", "", "patch generator for this objective: static, command or openai (default: patch.generator)")
	fl.StringVar(&f.patchFile, "patch-file", "", `unified diff for the static generator ("-" for stdin)`)
	fl.Float64Var(&f.budgetUSD, "budget-usd", 0, "most the objective's runs may spend, in dollars (default: the repository's patch.repositories[].budget_usd, else no cap)")
	fl.IntVar(&f.attempts, "attempts", 0, "candidate patches each run makes, the best by the gate's evidence delivered, 1 to 20 (default: the repository's patch.repositories[].attempts, else 1)")
	fl.StringVarP(&f.file, "file", "f", "", `JSON objective record ("-" for stdin)`)
	var o *domain.Objective
	parse := func(cmd *cobra.Command, _ []string) error {
		var err error
		if o, err = a.objectiveInput(cmd, f); err != nil {
			return inputError(err)
		}
		return nil
	}
	a.withSession(cmd, preamble{output: true, parse: parse}, func(cmd *cobra.Command, _ []string, c *call) error {
		if r := c.cfg.Patch.Repository(o.Repository); o.BudgetUSD == nil && o.Repository != "" && r.BudgetUSD > 0 {
			o.BudgetUSD = &r.BudgetUSD
		}
		defaultAttempts(o, c.cfg.Patch.Repository(o.Repository), cmd.Flags().Changed("attempts"))
		started := "lifecycle started, awaiting approval"
		// Temporal being down must not stop the objective from being stored.
		dialErr := a.dialTemporal(cmd, c.session)
		stored, err := c.starter.Create(cmd.Context(), o)
		if stored == nil {
			return classify(err)
		}
		if err != nil {
			if errors.Is(err, starter.ErrNotConnected) {
				err = dialErr
			}
			fmt.Fprintf(a.stderr, "azolla: warning: %s\n", oneLine(err.Error()))
			started = "stored; the lifecycle starts when a worker's poller reaches Temporal"
		}
		if c.json {
			return writeJSON(cmd.OutOrStdout(), o)
		}
		_, err = fmt.Fprintf(cmd.OutOrStdout(), "created objective %s (%s): %s\napprove it with: %s objective approve %s\n",
			o.ObjectiveID, o.Status, started, a.self(), o.ObjectiveID)
		return err
	})
	return cmd
}

// objectiveInput builds the objective to create and validates it. A mistake
// in the command line (a missing or conflicting flag, a malformed --due) is
// a usage error; anything else is about the input itself.
func (a *app) objectiveInput(cmd *cobra.Command, f objectiveFlags) (*domain.Objective, error) {
	fields := map[string]any{}
	if f.file != "" {
		for _, name := range []string{"id", "title", "criteria", "type", "urgency", "blocker", "due", "repository",
			"base-branch", "generator", "patch-file", "budget-usd", "attempts"} {
			if cmd.Flags().Changed(name) {
				return nil, usageError(fmt.Errorf("--%s cannot be combined with --file", name))
			}
		}
		raw, err := readInput(cmd, f.file)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(raw, &fields); err != nil {
			return nil, fmt.Errorf("%s: not a JSON object: %w", f.file, err)
		}
		if st, ok := fields["status"]; ok && st != domain.StatusNew {
			return nil, fmt.Errorf("%s: status must be NEW (or absent): a human approves with 'azolla objective approve'", f.file)
		}
	} else {
		if strings.TrimSpace(f.title) == "" {
			return nil, usageError(errors.New("--title is required (or --file)"))
		}
		fields["title"], fields["objective_type"], fields["urgency"] = f.title, f.typ, f.urgency
		if f.id != "" {
			fields["objective_id"] = f.id
		}
		setIf := func(key, v string) {
			if v != "" {
				fields[key] = v
			}
		}
		due, err := dueUTC(f.due)
		if err != nil {
			return nil, err
		}
		setIf("due_at", due)
		repo, err := absRepository(f.repository)
		if err != nil {
			return nil, err
		}
		setIf("repository", repo)
		setIf("base_branch", f.baseBranch)
		setIf("generator", f.generator)
		if f.patchFile != "" {
			raw, err := readInput(cmd, f.patchFile)
			if err != nil {
				return nil, fmt.Errorf("--patch-file: %w", err)
			}
			fields["patch"] = string(raw)
			if f.generator == "" {
				fields["generator"] = config.GeneratorStatic
			}
		}
		fields["acceptance_criteria"], fields["blockers"] = orEmpty(f.criteria), orEmpty(f.blockers)
		if cmd.Flags().Changed("budget-usd") {
			if math.IsNaN(f.budgetUSD) || math.IsInf(f.budgetUSD, 0) {
				return nil, usageError(fmt.Errorf("--budget-usd %v is not a number of dollars", f.budgetUSD))
			}
			fields["budget_usd"] = f.budgetUSD
		}
		if cmd.Flags().Changed("attempts") {
			if err := checkAttempts(f.attempts); err != nil {
				return nil, err
			}
			if f.attempts > 1 {
				fields["attempts"] = f.attempts
			}
		}
	}
	now := time.Now().UTC().Truncate(time.Microsecond).Format(time.RFC3339Nano)
	defaults := map[string]any{"objective_type": "TICKET", "urgency": "NORMAL", "status": domain.StatusNew,
		"status_seq": 0, "acceptance_criteria": []string{}, "blockers": []string{}, "created_at": now, "updated_at": now}
	for k, v := range defaults {
		if _, ok := fields[k]; !ok {
			fields[k] = v
		}
	}
	if _, ok := fields["objective_id"]; !ok {
		title, _ := fields["title"].(string)
		fields["objective_id"] = newObjectiveID(title)
	}
	if err := schemas.Validate(schemas.Objective, fields); err != nil {
		return nil, err
	}
	if repo, ok := fields["repository"].(string); ok {
		if err := gitops.ValidateRepository(repo); err != nil {
			return nil, err
		}
	}
	raw, err := json.Marshal(fields)
	if err != nil {
		return nil, err
	}
	var o domain.Objective
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil, fmt.Errorf("decode objective: %w", err)
	}
	return &o, nil
}

// dueUTC parses --due, an RFC 3339 timestamp with any offset, into the UTC
// form records hold ("" for none). It keeps microseconds, as created_at
// does, so both store backends hold the same instant.
func dueUTC(due string) (string, error) {
	if due == "" {
		return "", nil
	}
	t, err := time.Parse(time.RFC3339Nano, due)
	if err != nil {
		// time's message quotes its layout string; say what is expected instead.
		return "", usageError(fmt.Errorf("--due %q is not an RFC 3339 timestamp such as 2026-12-01T17:00:00Z or 2026-12-01T19:00:00+02:00", due))
	}
	return t.UTC().Truncate(time.Microsecond).Format(time.RFC3339Nano), nil
}

// absRepository makes a local repository path absolute, as the workers
// need it; URLs are returned as they are.
func absRepository(repo string) (string, error) {
	if repo == "" || strings.Contains(repo, "://") || filepath.IsAbs(repo) {
		return repo, nil
	}
	if _, err := os.Stat(repo); err != nil {
		return repo, nil // an scp-like URL (host:path), or a typo that validation names
	}
	abs, err := filepath.Abs(repo)
	if err != nil {
		return "", fmt.Errorf("--repository: %w", err)
	}
	return abs, nil
}

func readInput(cmd *cobra.Command, path string) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(cmd.InOrStdin())
	}
	return os.ReadFile(path)
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

// newObjectiveID derives a readable, unique id from a title:
// "Fix the login page" -> "fix-the-login-page-3f9a1c".
func newObjectiveID(title string) string {
	slug := strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(title), "-"), "-")
	if len(slug) > 40 {
		slug = strings.TrimRight(slug[:40], "-")
	}
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	if slug == "" {
		return "obj-" + hex.EncodeToString(b)
	}
	return slug + "-" + hex.EncodeToString(b)
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (a *app) objectiveListCmd() *cobra.Command {
	var (
		status  string
		overdue bool
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List objectives, oldest first",
		Args:  cobra.NoArgs,
	}
	cmd.Flags().StringVar(&status, "status", "", "only objectives with this status (NEW, TODO, IN_PROGRESS, DONE, BLOCKED)")
	cmd.Flags().BoolVar(&overdue, "overdue", false,
		"only objectives not DONE and past their deadline now (due_at, else created_at plus the SLA of their urgency, deadlines.sla)")
	parse := func(*cobra.Command, []string) error {
		return checkStatusFlag(status, domain.StatusStrings(domain.Statuses())...)
	}
	a.withSession(cmd, preamble{output: true, parse: parse}, func(cmd *cobra.Command, _ []string, c *call) error {
		var list []*domain.Objective
		var err error
		if overdue {
			list, err = inbox.Overdue(cmd.Context(), c.store, domain.Status(status), c.cfg.Deadlines.SLA.Map(),
				store.NowOr(time.Time{}))
		} else {
			list, err = c.store.ListObjectives(cmd.Context(), store.ListObjectivesParams{Status: domain.Status(status)})
		}
		if err != nil {
			return err
		}
		if c.json {
			if list == nil {
				list = []*domain.Objective{}
			}
			return writeJSON(cmd.OutOrStdout(), list)
		}
		out := cmd.OutOrStdout()
		fmt.Fprintf(out, "%-32s  %-11s  %-8s  %-8s  %s\n", "ID", "STATUS", "TYPE", "URGENCY", "TITLE")
		for _, o := range list {
			// Rows may have been written straight into the database, past the
			// schema: every stored field is rendered safe, not only the title.
			fmt.Fprintf(out, "%-32s  %-11s  %-8s  %-8s  %s\n", textsafe.Line(o.ObjectiveID), textsafe.Line(string(o.Status)),
				textsafe.Line(o.ObjectiveType), textsafe.Line(o.Urgency), textsafe.Line(o.Title))
		}
		return nil
	})
	return cmd
}
