package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/inbox"
	"github.com/azolla/azolla/internal/lifecycle/pause"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/textsafe"
	"github.com/azolla/azolla/workers"
	"github.com/azolla/azolla/workflows"
)

// objectiveDetail is everything the store and the lifecycle know of one
// objective: the JSON form of `objective show`.
type objectiveDetail struct {
	Objective   *domain.Objective    `json:"objective"`
	Events      []*domain.Event      `json:"events"`
	WorkOrders  []workOrderDetail    `json:"workorders"`
	PauseStates []*domain.PauseState `json:"pause_states"`
	// Jobs are the control plane's jobs of the workorders that ran on
	// remote workers, in workorder order: a workorder's own job, or one
	// per candidate of a best-of-N workorder.
	Jobs []jobDetail `json:"jobs"`
	// PullRequest is the objective's pull request on its forge, if any.
	PullRequest *domain.PullRequest `json:"pull_request,omitempty"`
	// Feedback is each review a round took, and each one not taken for
	// its author, in the order judged.
	Feedback []*domain.PullRequestFeedback `json:"pull_request_feedback"`
	// Intake is the issue (or posted document) the objective was made
	// from, if any; Commands the /azolla comments given on it and its
	// pull request, in order, with who gave them and what came of them.
	Intake   *domain.IntakeItem     `json:"intake,omitempty"`
	Commands []*domain.ForgeCommand `json:"forge_commands"`
	// Spend is what the objective's runs have spent, by their reports.
	Spend     domain.Spend     `json:"spend"`
	Lifecycle *workflows.State `json:"lifecycle,omitempty"`
	// LifecycleError says why the lifecycle could not be queried.
	LifecycleError string `json:"lifecycle_error,omitempty"`
	// RunSlot, when the lifecycle's run or gate waits for a worker's run
	// slot, says so with how many runs wait in all.
	RunSlot *runSlot `json:"run_slot,omitempty"`
}

// runSlot is a run waiting for a free run slot: Waiting runs wait on the
// run task queue in all (Temporal's approximate count); or, under a limit
// (max_concurrent_runs), Ahead runs wait before it in that limit's queue,
// whose Limit slots are all taken.
type runSlot struct {
	Queued  bool  `json:"queued"`
	Waiting int64 `json:"waiting"`
	// Limit is "repository" or "deployment" when the run waits under a
	// limit.
	Limit     string `json:"limit,omitempty"`
	Ahead     int    `json:"ahead,omitempty"`
	LimitRuns int    `json:"limit_runs,omitempty"`
}

// limitSlot says where the run of the lifecycle's current workorder waits
// under a limit, if it does.
func limitSlot(ctx context.Context, cfg config.Config, st store.Store, wo string) *runSlot {
	q, ok, err := workers.SlotQueues(cfg, st).Position(ctx, wo)
	if err != nil || !ok {
		return nil
	}
	r := &runSlot{Queued: true, Limit: "repository", Ahead: q.Ahead, LimitRuns: q.Limit}
	if q.Deployment {
		r.Limit = "deployment"
	}
	return r
}

// jobDetail is one workorder's job with its attempts and their leases.
type jobDetail struct {
	Job      *domain.Job          `json:"job"`
	Attempts []*domain.JobAttempt `json:"attempts"`
	Leases   []leaseDetail        `json:"leases"`
}

// leaseDetail is a job lease without its token: the token is the
// holder's fencing credential, and show is no place to hand it out.
type leaseDetail struct {
	AttemptID      string     `json:"attempt_id"`
	WorkerID       string     `json:"worker_id"`
	LeaseExpiresAt time.Time  `json:"lease_expires_at"`
	HeartbeatAt    time.Time  `json:"heartbeat_at"`
	CreatedAt      time.Time  `json:"created_at"`
	ReleasedAt     *time.Time `json:"released_at,omitempty"`
}

type workOrderDetail struct {
	WorkOrder    *domain.WorkOrder       `json:"workorder"`
	Snapshot     *domain.ContextSnapshot `json:"context_snapshot,omitempty"`
	OutputBundle *domain.OutputBundle    `json:"output_bundle,omitempty"`
	RunRecord    *domain.RunRecord       `json:"run_record,omitempty"`
	// Candidates are the workorder's candidate patches by attempt, when
	// its objective asked for several (best-of-N); empty otherwise.
	Candidates []*domain.Candidate `json:"candidates"`
}

// detailStore is what objective show reads: every record of an
// objective's lifecycle, and the jobs of its remote runs.
type detailStore interface {
	store.ObjectiveQuerier
	store.EventQuerier
	store.PauseQuerier
	store.RunQuerier
	store.CandidateQuerier
	store.PullRequestQuerier
	store.PullRequestFeedbackQuerier
	store.IntakeQuerier
	store.JobStore
}

// loadDetail reads everything the store holds of objective id.
func loadDetail(ctx context.Context, st detailStore, id string) (*objectiveDetail, error) {
	o, err := st.GetObjective(ctx, id)
	if err != nil {
		return nil, err
	}
	d := &objectiveDetail{Objective: o, WorkOrders: []workOrderDetail{}, Jobs: []jobDetail{}}
	if d.Events, err = st.ListEvents(ctx, store.ListEventsParams{SubjectID: id}); err != nil {
		return nil, err
	}
	if d.PauseStates, err = st.ListPauseStates(ctx, id); err != nil {
		return nil, err
	}
	if d.PullRequest, err = optional(st.GetPullRequest(ctx, id)); err != nil {
		return nil, err
	}
	if d.Feedback, err = st.ListPullRequestFeedback(ctx, id); err != nil {
		return nil, err
	}
	if d.Feedback == nil {
		d.Feedback = []*domain.PullRequestFeedback{}
	}
	if d.Intake, err = optional(st.IntakeItemOf(ctx, id)); err != nil {
		return nil, err
	}
	if d.Commands, err = st.ListForgeCommands(ctx, id); err != nil {
		return nil, err
	}
	if d.Commands == nil {
		d.Commands = []*domain.ForgeCommand{}
	}
	wos, err := st.ListWorkOrders(ctx, store.ListWorkOrdersParams{ObjectiveID: id})
	if err != nil {
		return nil, err
	}
	for _, w := range wos {
		wd := workOrderDetail{WorkOrder: w}
		if wd.Snapshot, err = optional(st.GetContextSnapshot(ctx, w.ContextSnapshotID)); err != nil {
			return nil, err
		}
		if wd.OutputBundle, err = optional(st.GetOutputBundle(ctx, w.WorkOrderID)); err != nil {
			return nil, err
		}
		if wd.RunRecord, err = optional(st.GetRunRecord(ctx, w.WorkOrderID)); err != nil {
			return nil, err
		}
		if wd.Candidates, err = loadCandidates(ctx, st, w.WorkOrderID); err != nil {
			return nil, err
		}
		d.WorkOrders = append(d.WorkOrders, wd)
		// Counted as the store's ObjectiveSpend counts, from what is read
		// here already.
		var bundle *domain.BundleMetadata
		if wd.OutputBundle != nil {
			bundle = &wd.OutputBundle.Metadata
		}
		d.Spend.AddWorkOrder(bundle, wd.Candidates)
		jds, err := loadJobs(ctx, st, w.WorkOrderID)
		if err != nil {
			return nil, err
		}
		d.Jobs = append(d.Jobs, jds...)
	}
	return d, nil
}

// loadJobs reads the jobs of a workorder, with their attempts and leases:
// its own, or one per candidate that ran remotely; none when it ran
// in-process.
func loadJobs(ctx context.Context, st store.JobStore, workOrderID string) ([]jobDetail, error) {
	// A workorder has at most one job of its own and one per candidate.
	js, err := st.ListJobs(ctx, store.ListJobsParams{WorkOrderID: workOrderID, Limit: domain.MaxAttempts + 1})
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(js, func(a, b *domain.Job) int { return a.Candidate - b.Candidate })
	out := make([]jobDetail, 0, len(js))
	for _, j := range js {
		jd, err := loadJob(ctx, st, j)
		if err != nil {
			return nil, err
		}
		out = append(out, *jd)
	}
	return out, nil
}

// loadJob reads a job's attempts and leases.
func loadJob(ctx context.Context, st store.JobStore, j *domain.Job) (*jobDetail, error) {
	var err error
	jd := &jobDetail{Job: j, Leases: []leaseDetail{}}
	if jd.Attempts, err = st.ListJobAttempts(ctx, j.JobID); err != nil {
		return nil, err
	}
	leases, err := st.ListJobLeases(ctx, j.JobID)
	if err != nil {
		return nil, err
	}
	for _, l := range leases {
		jd.Leases = append(jd.Leases, leaseDetail{AttemptID: l.AttemptID, WorkerID: l.WorkerID,
			LeaseExpiresAt: l.LeaseExpiresAt, HeartbeatAt: l.HeartbeatAt, CreatedAt: l.CreatedAt, ReleasedAt: l.ReleasedAt})
	}
	return jd, nil
}

// optional turns ErrNotFound into nil.
func optional[T any](v *T, err error) (*T, error) {
	if errors.Is(err, domain.ErrNotFound) {
		return nil, nil
	}
	return v, err
}

func (a *app) objectiveShowCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "show OBJECTIVE_ID",
		Short: "Show an objective: its events, workorders, outputs, verdicts, pause states and lifecycle",
		Args:  cobra.ExactArgs(1),
	}
	a.withSession(cmd, preamble{output: true}, func(cmd *cobra.Command, args []string, c *call) error {
		d, err := loadDetail(cmd.Context(), c.store, args[0])
		if err != nil {
			return classify(err)
		}
		if err := a.dialTemporal(cmd, c.session); err != nil {
			d.LifecycleError = oneLine(err.Error())
		} else if st, err := c.starter.State(cmd.Context(), args[0]); err != nil {
			d.LifecycleError = oneLine(err.Error())
		} else {
			d.Lifecycle = &st
			if st.Step == workflows.StepAwaitingRunSlot || st.Step == workflows.StepRunning {
				d.RunSlot = limitSlot(cmd.Context(), c.cfg, c.store, st.CurrentWorkOrderID)
			}
			if d.RunSlot == nil && (st.Step == workflows.StepRunning || st.Step == workflows.StepGating) {
				cfg := c.cfg.Temporal
				if queued, n, err := c.starter.RunSlot(cmd.Context(), cfg.Namespace, cfg.TaskQueue, args[0]); err == nil && queued {
					d.RunSlot = &runSlot{Queued: true, Waiting: n}
				}
			}
		}
		if c.json {
			return writeJSON(cmd.OutOrStdout(), d)
		}
		return printDetail(cmd.OutOrStdout(), d, a.self(), time.Now())
	})
	return cmd
}

// printDetail writes what show prints. Every stored string goes through
// textsafe: Line for single-line fields, Block for notes, gate reasons and
// the diff. Records are validated on write, but rows may be written straight
// into the database, and multi-line content is never restricted.
func printDetail(out io.Writer, d *objectiveDetail, self string, now time.Time) error {
	o := d.Objective
	p := func(format string, args ...any) { fmt.Fprintf(out, format, args...) }
	line, block := textsafe.Line, textsafe.Block
	p("objective   %s  %s  (%s, urgency %s)\n", line(o.ObjectiveID), line(string(o.Status)), line(o.ObjectiveType), line(o.Urgency))
	p("title       %s\n", line(o.Title))
	for _, c := range o.AcceptanceCriteria {
		p("criterion   %s\n", line(c))
	}
	for _, b := range o.Blockers {
		p("blocker     %s\n", line(b))
	}
	if o.BlockerRef != "" {
		p("blocker ref %s\n", line(string(o.BlockerRef)))
	}
	if it := d.Intake; it != nil {
		by := ""
		if it.Author != "" {
			by = " by " + line(it.Author)
		}
		p("from        %s%s\n", line(cmp.Or(it.URL, it.Source+" "+it.ExternalID)), by)
	} else if o.Provenance != "" {
		p("from        %s\n", line(o.Provenance))
	}
	if n := len(d.Commands); n > 0 {
		c := d.Commands[n-1]
		p("command     /azolla %s by %s on %s: %s\n", line(c.Command), line(c.Author), line(c.Thread), line(c.Result))
	}
	if o.Repository != "" {
		p("repository  %s (base %s)\n", line(o.Repository), line(cmp.Or(o.BaseBranch, "its default branch")))
		p("generator   %s\n", line(generatorLabel(o)))
	}
	if l := spendLine(&d.Spend, o.BudgetUSD); d.Spend.Runs > 0 || o.BudgetUSD != nil {
		p("spent       %s\n", line(l))
	}
	if d.Lifecycle != nil {
		p("lifecycle   %s, round %d, workflow %s\n", line(d.Lifecycle.Step), d.Lifecycle.Round, line(workflows.ObjectiveWorkflowID(o.ObjectiveID)))
		switch rs := d.RunSlot; {
		case rs != nil && rs.Limit != "" && rs.LimitRuns > 0:
			p("            queued for a run slot (%d ahead; the %s's limit of %d run(s) at once is reached)\n",
				rs.Ahead, rs.Limit, rs.LimitRuns)
		case rs != nil && rs.Limit != "":
			p("            queued for a run slot (%d ahead; the %s's limit is reached)\n", rs.Ahead, rs.Limit)
		case rs != nil:
			p("            queued for a run slot (%d run(s) waiting in all; worker.max_runs sets each worker's slots)\n",
				rs.Waiting)
		}
	} else {
		p("lifecycle   unavailable: %s\n", line(d.LifecycleError))
	}
	for _, e := range d.Events {
		state := "unprocessed"
		if e.Processed {
			state = "processed " + e.ProcessedReason
		}
		p("event       %s  %s  transition %d  %s\n", line(e.EventID), line(e.EventType), e.TransitionSeq, line(state))
	}
	for _, w := range d.WorkOrders {
		wo := w.WorkOrder
		left := ""
		if wo.BudgetUSDRemaining != nil {
			left = ", " + domain.USD(*wo.BudgetUSDRemaining) + " left to spend"
		}
		p("workorder   %s  %s  %s  branch %s  budget %s%s\n", line(wo.WorkOrderID), line(wo.DiazotrophType), line(wo.Status),
			line(wo.BranchName), time.Duration(wo.BudgetMS)*time.Millisecond, left)
		if b := w.OutputBundle; b != nil {
			p("  output    %s  \"%s\", %d bytes\n", line(b.RunnerStatus), line(b.Title), len(b.Content))
			if b.Metadata.CommitSHA != "" {
				p("  commit    %s on %s\n", line(b.Metadata.CommitSHA), line(b.Metadata.BranchName))
			}
			if pw := b.Metadata.Partial; pw != nil {
				p("  partial   %d file(s), %d bytes of diff: commit %s on %s (%s)\n", pw.FilesChanged, pw.Bytes,
					line(pw.CommitSHA), line(pw.Ref), line(strings.Join(pw.Files, ", ")))
			}
			if q := b.Metadata.Question; q != "" {
				p("  question  %s\n", indent(block(q), "            "))
			}
			switch rr := b.Metadata.RunReport; {
			case rr != nil:
				p("  report    %s\n", line(reportLine(rr)))
			case unknownCost(b.Metadata):
				p("  report    none: the %s generator's run wrote no report, its cost is unknown\n", line(b.Metadata.Generator))
			}
			p("  notes     %s\n", indent(block(b.Notes), "            "))
		}
		printCandidatesShort(out, w.Candidates)
		if r := w.RunRecord; r != nil {
			p("  gate      %s  %s\n", line(r.GateResult), indent(block(r.GateReason), "            "))
		}
		for _, jd := range d.jobs(wo.WorkOrderID) {
			printJob(out, jd, now)
		}
	}
	if n := len(d.WorkOrders); n > 0 && d.WorkOrders[n-1].OutputBundle != nil && d.WorkOrders[n-1].OutputBundle.Content != "" {
		p("content of %s:\n  %s\n", line(d.WorkOrders[n-1].WorkOrder.WorkOrderID),
			indent(block(strings.TrimRight(d.WorkOrders[n-1].OutputBundle.Content, "\n")), "  "))
	}
	printPullRequest(out, d)
	if n := len(d.PauseStates); n > 0 {
		printPause(out, d.PauseStates[n-1], self)
	}
	return nil
}

// printPullRequest writes the objective's pull request, or why the
// lifecycle has none yet.
func printPullRequest(out io.Writer, d *objectiveDetail) {
	line := textsafe.Line
	if pr := d.PullRequest; pr != nil {
		how := "opened"
		if pr.Adopted {
			how = "adopted"
		}
		fmt.Fprintf(out, "pull req    %s  %s  #%d on %s %s (%s by azolla), head %s at %s, round %d\n", line(pr.URL),
			line(string(pr.State)), pr.Number, line(pr.Forge), line(pr.Repository), how, line(pr.HeadBranch),
			line(pr.HeadSHA), pr.Rounds)
		if l := d.Lifecycle; l != nil && l.PullRequestWaiting != "" {
			fmt.Fprintf(out, "  feedback  %s: 'objective retry %s' takes it into the next round\n",
				line(l.PullRequestWaiting), line(pr.ObjectiveID))
		}
		for _, f := range d.Feedback {
			if f.TakenBy != "" {
				fmt.Fprintf(out, "  %s\n", takenLine(f))
			}
		}
		if refused := inbox.NotTaken(d.Feedback, pr.Number); len(refused) > 0 {
			for _, f := range refused {
				fmt.Fprintf(out, "  %s\n", inbox.NotTakenLine(f))
			}
			fmt.Fprintf(out, "            only people who may write to %s steer the agent; to act on it, say it in your own words: "+
				"objective retry %s --comment \"…\"\n", line(pr.Repository), line(pr.ObjectiveID))
		}
		if l := d.Lifecycle; l != nil && l.PullRequestError != "" {
			fmt.Fprintf(out, "  not read  %s\n", line(l.PullRequestError))
		}
		return
	}
	switch l := d.Lifecycle; {
	case l == nil:
	case l.Step == workflows.StepPullRequest:
		fmt.Fprintf(out, "pull req    pending: the forge is being asked (retried with backoff while it is down)\n")
	case l.PullRequestError != "":
		fmt.Fprintf(out, "pull req    none: %s\n", line(l.PullRequestError))
	}
}

// jobs returns the jobs of workorder id: its own, or its candidates'.
func (d *objectiveDetail) jobs(id string) []*jobDetail {
	var out []*jobDetail
	for i := range d.Jobs {
		if d.Jobs[i].Job.WorkOrderID == id {
			out = append(out, &d.Jobs[i])
		}
	}
	return out
}

// printJob writes a remote workorder's job under it: the job, its last
// error, and each attempt with its lease (live or not at now).
func printJob(out io.Writer, jd *jobDetail, now time.Time) {
	p := func(format string, args ...any) { fmt.Fprintf(out, format, args...) }
	line := textsafe.Line
	j := jd.Job
	of := ""
	if j.Candidate > 0 {
		of = fmt.Sprintf("  candidate %d", j.Candidate)
	}
	p("  job       %s  %s%s  stream %s  attempts %d/%d\n", line(j.JobID), line(j.Status), of, line(j.Stream),
		j.AttemptCount, j.MaxAttempts)
	if e := j.Error; e != nil {
		p("  error     %s  %s\n", line(e.Code), line(e.Message))
	}
	leases := make(map[string]leaseDetail, len(jd.Leases))
	for _, l := range jd.Leases {
		leases[l.AttemptID] = l
	}
	for _, a := range jd.Attempts {
		span := "started " + a.StartedAt.Format(time.RFC3339)
		if a.FinishedAt != nil {
			span += ", finished " + a.FinishedAt.Format(time.RFC3339)
		}
		p("  attempt   %d  %s  %s  %s\n", a.AttemptNumber, line(a.WorkerID), line(a.Status), span)
		if l, ok := leases[a.AttemptID]; ok {
			p("    lease   %s  expires %s  %s\n", line(l.WorkerID), l.LeaseExpiresAt.Format(time.RFC3339), leaseState(l, now))
		}
	}
}

// leaseState is "released at T", "live" or "expired".
func leaseState(l leaseDetail, now time.Time) string {
	switch {
	case l.ReleasedAt != nil:
		return "released " + l.ReleasedAt.Format(time.RFC3339)
	case now.Before(l.LeaseExpiresAt):
		return "live"
	}
	return "expired"
}

// printPause writes a pause state and its actions, each rendered on one
// safe line.
func printPause(out io.Writer, ps *domain.PauseState, self string) {
	fmt.Fprintf(out, "paused      %s at %s\n", textsafe.Line(ps.Reason), ps.CreatedAt.Format(time.RFC3339))
	for i, act := range ps.PrioritizedActions {
		fmt.Fprintf(out, "  %d. %s\n", i+1, textsafe.Line(act))
		// The command is rendered here, from the action's kind, as the
		// user invoked azolla: the stored record holds only the words.
		if c := pause.Command(self, ps, i); c != "" {
			fmt.Fprintf(out, "       run: %s\n", textsafe.Line(c))
		}
	}
}

// indent prefixes every line but the first.
func indent(s, prefix string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+prefix)
}

// generatorLabel says which patch generator an objective gets.
func generatorLabel(o *domain.Objective) string {
	label := cmp.Or(o.Generator, "as configured (patch.generator)")
	if o.Patch != "" {
		label += fmt.Sprintf(", with a %d-byte patch", len(o.Patch))
	}
	return label
}

// unknownCost says whether a run that may have cost left no cost.
func unknownCost(m domain.BundleMetadata) bool {
	var sp domain.Spend
	sp.Add(m)
	return sp.Unknown > 0
}

// reportLine is a run report in one line: model, cost, tokens, turns.
func reportLine(r *domain.RunReport) string {
	var parts []string
	if r.Model != "" {
		parts = append(parts, "model "+r.Model)
	}
	if r.CostUSD != nil {
		parts = append(parts, fmt.Sprintf("$%.4f", *r.CostUSD))
	} else {
		parts = append(parts, "cost unknown")
	}
	if t := r.Tokens; t != nil {
		parts = append(parts, fmt.Sprintf("%d in / %d out tokens (cache %d read, %d written)", t.Input, t.Output,
			t.CacheRead, t.CacheWrite))
	}
	if r.Turns > 0 {
		parts = append(parts, fmt.Sprintf("%d turns", r.Turns))
	}
	if r.Source != "" {
		parts = append(parts, "from "+string(r.Source))
	}
	out := strings.Join(parts, ", ")
	if r.Summary != "" {
		out += ": " + r.Summary
	}
	return out
}
