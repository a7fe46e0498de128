// Package gitea is the forge.Forge of Gitea and Forgejo, over their REST
// API (/api/v1) with net/http.
//
// Plain REST rather than Gitea's SDK: azolla needs a dozen endpoints, the
// SDK would add a module graph of its own to azolla's, and it follows
// Gitea's releases where these endpoints are the ones Forgejo shares.
// Tested against a real Gitea (internal/forge/giteatest); docs/forge-gitea.md
// says how to run one.
//
// How the seam's vocabulary maps onto Gitea's:
//
//   - Exactly once. Gitea refuses to create a second open pull request
//     for the same head and base (409), but it checks before it creates,
//     outside the transaction, so callers racing may each create one. Its
//     numbers are handed out under a row lock held until the creation
//     commits, so the lowest-numbered open pull request of a head is the
//     one created first, and every later creator sees it. OpenOrAdopt
//     therefore looks again after creating: a creator whose pull request is
//     not the lowest closes it and adopts the lowest. Calls on one Forge
//     are serialised, so this happens only between processes.
//   - Drafts are pull requests whose title starts with a work-in-progress
//     prefix ("WIP:" or "[WIP]" by default). A draft is opened with "WIP: "
//     in front of its title; PullRequest.Title is the title without it, and
//     Update keeps it on a draft.
//   - Mergeable: Gitea answers false while it is still checking a pull
//     request after a push as well as on a conflict; a draft is never
//     mergeable to Gitea, so Mergeable is nil for a draft and a false right
//     after a push may turn true a moment later.
//   - Reviews: APPROVED, REQUEST_CHANGES and COMMENT map to the seam's
//     verdicts; pending reviews and review requests (REQUEST_REVIEW) are
//     not reviews yet. Gitea flags a review dismissed both when a
//     maintainer dismisses it and when its author submits a later
//     approval or request for changes; only the first is the seam's
//     dismissed, the second keeps its verdict, which the later one
//     replaces. A
//     pending review keeps the id it was created with when it is
//     submitted, and only its author sees it before, so the Cursor is the
//     set of review ids already returned (decimal, comma-separated,
//     ascending) rather than the highest one: a review submitted late with
//     a low id is still returned once.
//   - Checks are the commit's statuses, latest per context. success and
//     skipped are success, pending is pending, error, failure and warning
//     are failure (Gitea's own combined state counts warning as failure).
//   - Comments on a pull request are comments on its issue: a Thread is
//     its number, Pull or not. Gitea answers 500 for the comments of a
//     number no issue has; the issue is then asked for, and its 404 is
//     forge.ErrNotFound.
//   - Issues. The list is asked for type=issues, every state, since the
//     update time in whole seconds (Gitea counts at or after it). Gitea
//     orders it by creation, newest first, and takes no other order, so
//     an issue opened while pages are read pushes the others down: one
//     may come twice and is kept once; they are sorted by update after.
//     An issue Gitea answers with pull_request set is a pull request:
//     Issue says forge.ErrNotFound for it.
package gitea
