package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	gh "github.com/google/go-github/v89/github"

	"github.com/azolla/azolla/internal/forge"
)

// DefaultBaseURL is github.com's REST API. GitHub Enterprise Server's is
// https://HOST/api/v3/.
const DefaultBaseURL = "https://api.github.com/"

// Defaults of Options.
const (
	// DefaultPageSize is GitHub's largest per_page: the fewest requests.
	DefaultPageSize = 100
	// DefaultMaxWait is the longest rate-limit wait slept through inside a
	// call.
	DefaultMaxWait = time.Minute
	// defaultTimeout bounds one request when Options.HTTPClient is nil.
	defaultTimeout = 30 * time.Second
)

// Options say which repository, with which token, and how to behave on the
// wire.
type Options struct {
	// BaseURL is the REST API's root, taken whole (GitHub Enterprise
	// Server's is https://HOST/api/v3/); empty: DefaultBaseURL.
	BaseURL string
	Owner   string
	Repo    string
	// Token is sent in the Authorization header, and nowhere else.
	Token string
	// HTTPClient carries the requests; nil: one with a 30-second timeout.
	// go-github copies it, so it is never changed.
	HTTPClient *http.Client
	// PageSize is per_page on every list; 0: DefaultPageSize.
	PageSize int
	// Sleep waits d, or until ctx ends; nil: a timer. Tests pass one that
	// records and returns at once.
	Sleep func(ctx context.Context, d time.Duration) error
	// MaxWait is the longest rate-limit wait slept through inside a call; a
	// longer one is returned as *forge.RateLimitError. 0: DefaultMaxWait;
	// negative: never wait.
	MaxWait time.Duration
}

// Forge is one GitHub repository reached with one token.
type Forge struct {
	client   *gh.Client
	owner    string
	repo     string
	pageSize int
	sleep    func(ctx context.Context, d time.Duration) error
	maxWait  time.Duration
}

var _ forge.Forge = (*Forge)(nil)

// New returns the forge.Forge of o's repository.
func New(o Options) (forge.Forge, error) {
	if o.Owner == "" || o.Repo == "" {
		return nil, errors.New("github: the repository's owner and name are required")
	}
	if o.Token == "" {
		return nil, errors.New("github: a token is required")
	}
	if o.PageSize < 0 || o.PageSize > DefaultPageSize {
		return nil, fmt.Errorf("github: page size %d is outside 1..%d", o.PageSize, DefaultPageSize)
	}
	base := o.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: defaultTimeout}
	}
	client, err := gh.NewClient(
		gh.WithHTTPClient(hc),
		gh.WithURLs(&base, nil),
		gh.WithAuthToken(o.Token),
		gh.WithUserAgent("azolla"),
	)
	if err != nil {
		return nil, fmt.Errorf("github: building the client for %s: %w", base, err)
	}
	f := &Forge{client: client, owner: o.Owner, repo: o.Repo, pageSize: o.PageSize,
		sleep: o.Sleep, maxWait: o.MaxWait}
	if f.pageSize == 0 {
		f.pageSize = DefaultPageSize
	}
	if f.sleep == nil {
		f.sleep = sleepTimer
	}
	if f.maxWait == 0 {
		f.maxWait = DefaultMaxWait
	}
	return f, nil
}

// OpenOrAdopt implements forge.Forge; the package comment says how.
func (f *Forge) OpenOrAdopt(ctx context.Context, p forge.NewPullRequest) (forge.PullRequest, bool, error) {
	pr, found, err := f.findOpen(ctx, p.Head, p.Base)
	if err != nil || found {
		return pr, false, err
	}
	if err := f.checkLabelsAndReviewers(ctx, p); err != nil {
		return forge.PullRequest{}, false, err
	}
	var made *gh.PullRequest
	err = f.do(ctx, func(ctx context.Context) (resp *gh.Response, err error) {
		made, resp, err = f.client.PullRequests.Create(ctx, f.owner, f.repo, &gh.NewPullRequest{
			Title: &p.Title, Head: &p.Head, Base: &p.Base, Body: &p.Body, Draft: &p.Draft})
		return resp, err
	})
	if alreadyExists(err) {
		pr, found, lerr := f.findOpen(ctx, p.Head, p.Base)
		if lerr != nil || found {
			return pr, false, lerr
		}
		return forge.PullRequest{}, false, fmt.Errorf(
			"github: opening a pull request from %s onto %s: GitHub says one exists, but none is open: %w",
			p.Head, p.Base, err)
	}
	if err != nil {
		return forge.PullRequest{}, false, fmt.Errorf("github: opening a pull request from %s onto %s: %w",
			p.Head, p.Base, err)
	}
	pr = pullRequest(made)
	// The pull request exists from here on: a failure below is returned
	// with it, and a retry adopts it without labels or reviewers.
	if err := f.labelAndRequest(ctx, pr.Number, p); err != nil {
		return pr, true, err
	}
	return pr, true, nil
}

// findOpen lists the open pull requests from head onto base and returns the
// oldest. GitHub allows one, but if a second slipped in, every caller
// still picks the same.
func (f *Forge) findOpen(ctx context.Context, head, base string) (forge.PullRequest, bool, error) {
	opts := gh.PullRequestListOptions{State: "open", Head: f.owner + ":" + head, Base: base}
	open, err := collect(ctx, f, func(ctx context.Context, page int) ([]*gh.PullRequest, *gh.Response, error) {
		o := opts
		o.ListOptions = gh.ListOptions{PerPage: f.pageSize, Page: page}
		return f.client.PullRequests.List(ctx, f.owner, f.repo, &o)
	})
	if err != nil {
		return forge.PullRequest{}, false, fmt.Errorf("github: listing open pull requests from %s onto %s: %w",
			head, base, err)
	}
	if len(open) == 0 {
		return forge.PullRequest{}, false, nil
	}
	oldest := slices.MinFunc(open, func(a, b *gh.PullRequest) int { return a.GetNumber() - b.GetNumber() })
	return pullRequest(oldest), true, nil
}

// alreadyExists says whether err is GitHub's refusal to open a second pull
// request for the same head and base.
func alreadyExists(err error) bool {
	var er *gh.ErrorResponse
	if !errors.As(err, &er) || er.Response == nil || er.Response.StatusCode != http.StatusUnprocessableEntity {
		return false
	}
	const text = "a pull request already exists"
	if strings.Contains(strings.ToLower(er.Message), text) {
		return true
	}
	for _, e := range er.Errors {
		if strings.Contains(strings.ToLower(e.Message), text) {
			return true
		}
	}
	return false
}

// checkLabelsAndReviewers refuses labels the repository lacks (GitHub
// would create them) and reviewers who are not collaborators (GitHub would
// refuse the review request after the pull request exists).
func (f *Forge) checkLabelsAndReviewers(ctx context.Context, p forge.NewPullRequest) error {
	var missing, strangers []string
	for _, name := range p.Labels {
		err := f.do(ctx, func(ctx context.Context) (*gh.Response, error) {
			_, resp, err := f.client.Issues.GetLabel(ctx, f.owner, f.repo, name)
			return resp, err
		})
		switch {
		case errors.Is(err, forge.ErrNotFound):
			missing = append(missing, name)
		case err != nil:
			return fmt.Errorf("github: looking up label %q: %w", name, err)
		}
	}
	for _, user := range p.Reviewers {
		var ok bool
		err := f.do(ctx, func(ctx context.Context) (resp *gh.Response, err error) {
			ok, resp, err = f.client.Repositories.IsCollaborator(ctx, f.owner, f.repo, user)
			return resp, err
		})
		if err != nil {
			return fmt.Errorf("github: checking reviewer %q is a collaborator: %w", user, err)
		}
		if !ok {
			strangers = append(strangers, user)
		}
	}
	var problems []string
	if len(missing) > 0 {
		problems = append(problems, fmt.Sprintf("labels %q do not exist in %s/%s", missing, f.owner, f.repo))
	}
	if len(strangers) > 0 {
		problems = append(problems, fmt.Sprintf("reviewers %q are not collaborators on %s/%s", strangers, f.owner, f.repo))
	}
	if len(problems) > 0 {
		return fmt.Errorf("github: not opening a pull request from %s: %s", p.Head, strings.Join(problems, "; "))
	}
	return nil
}

// labelAndRequest adds p's labels and requests p's reviewers on a pull
// request just created.
func (f *Forge) labelAndRequest(ctx context.Context, number int, p forge.NewPullRequest) error {
	if len(p.Labels) > 0 {
		err := f.do(ctx, func(ctx context.Context) (*gh.Response, error) {
			_, resp, err := f.client.Issues.AddLabelsToIssue(ctx, f.owner, f.repo, number, p.Labels)
			return resp, err
		})
		if err != nil {
			return fmt.Errorf("github: labelling pull request #%d: %w", number, err)
		}
	}
	if len(p.Reviewers) > 0 {
		err := f.do(ctx, func(ctx context.Context) (*gh.Response, error) {
			_, resp, err := f.client.PullRequests.RequestReviewers(ctx, f.owner, f.repo, number,
				gh.ReviewersRequest{Reviewers: p.Reviewers})
			return resp, err
		})
		if err != nil {
			return fmt.Errorf("github: requesting reviewers on pull request #%d: %w", number, err)
		}
	}
	return nil
}

// Update implements forge.Forge.
func (f *Forge) Update(ctx context.Context, number int, title, body string) (forge.PullRequest, error) {
	var got *gh.PullRequest
	err := f.do(ctx, func(ctx context.Context) (resp *gh.Response, err error) {
		got, resp, err = f.client.PullRequests.Edit(ctx, f.owner, f.repo, number,
			&gh.PullRequest{Title: &title, Body: &body})
		return resp, err
	})
	if err != nil {
		return forge.PullRequest{}, fmt.Errorf("github: updating pull request #%d: %w", number, err)
	}
	return pullRequest(got), nil
}

// Comment implements forge.Forge: a comment on the conversation is an issue
// comment on GitHub.
func (f *Forge) Comment(ctx context.Context, number int, body string) error {
	_, err := f.PostComment(ctx, forge.Thread{Number: number, Pull: true}, body)
	return err
}

// PullRequest implements forge.Forge.
func (f *Forge) PullRequest(ctx context.Context, number int) (forge.PullRequest, error) {
	var got *gh.PullRequest
	err := f.do(ctx, func(ctx context.Context) (resp *gh.Response, err error) {
		got, resp, err = f.client.PullRequests.Get(ctx, f.owner, f.repo, number)
		return resp, err
	})
	if err != nil {
		return forge.PullRequest{}, fmt.Errorf("github: reading pull request #%d: %w", number, err)
	}
	return pullRequest(got), nil
}

// pullRequest maps GitHub's pull request. A listed one ("pull request
// simple") has no merged field, so merged_at decides too.
func pullRequest(p *gh.PullRequest) forge.PullRequest {
	pr := forge.PullRequest{
		Number:    p.GetNumber(),
		URL:       p.GetHTMLURL(),
		Title:     p.GetTitle(),
		Body:      p.GetBody(),
		Author:    p.GetUser().GetLogin(),
		Head:      p.GetHead().GetRef(),
		HeadSHA:   p.GetHead().GetSHA(),
		Base:      p.GetBase().GetRef(),
		Draft:     p.GetDraft(),
		Mergeable: p.Mergeable,
		Conflicts: p.Mergeable != nil && !*p.Mergeable,
	}
	switch {
	case p.GetMerged() || p.MergedAt != nil:
		pr.State = forge.StateMerged
		pr.MergeSHA = p.GetMergeCommitSHA()
	case p.GetState() == "closed":
		pr.State = forge.StateClosed
	default:
		pr.State = forge.StateOpen
	}
	return pr
}
