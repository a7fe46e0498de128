// Package github is the forge.Forge of GitHub and GitHub Enterprise Server,
// over the REST API through go-github.
//
// Choices the REST API leaves open, made once here:
//
//   - Opening. OpenOrAdopt lists the open pull requests from head=owner:branch
//     onto base and adopts the oldest; only when there is none does it create
//     one. GitHub refuses a second open pull request for the same head and
//     base with a 422 whose error reads "A pull request already exists"; that
//     answer means another caller won the race, and the winner's pull
//     request is listed and adopted.
//   - Labels and reviewers. GitHub creates a label it does not know when one
//     is added to an issue. azolla does not let a typo grow the label list,
//     so before creating the pull request it looks up every label and checks
//     every reviewer is a collaborator, and refuses the whole request naming
//     the missing ones. They are applied only to a pull request this call
//     created; adopting changes nothing.
//   - Review comments. They are read from the pull request's comment list
//     (GET /pulls/{n}/comments), not from each review's: that one answers
//     GitHub's "legacy review comment", whose line fields are optional and
//     in practice absent. Line is `line` on the RIGHT side, OldLine is `line`
//     on the LEFT side; a comment GitHub marks outdated has no `line`, and
//     `original_line` (where it was written) is taken instead. A comment on
//     a whole file has neither. A multi-line comment gives its last line.
//   - The reviews cursor. A review's id is given when it is started, not when
//     it is submitted, and a started review is visible to its author alone:
//     a review started before another was submitted can appear later with a
//     lower id. So the cursor is not the highest id but the second of the
//     latest submission read, with the ids of the reviews read that were
//     submitted within a minute before it; a review is new when it was
//     submitted later, or in that minute and is not among those ids.
//   - Issues. The repository's issue list holds its pull requests too,
//     marked by a pull_request key: they are dropped, and Issue answers
//     forge.ErrNotFound for one (and for a deleted issue's 410). The list
//     is read sorted by creation, oldest first: an issue updated while
//     the pages are read keeps its place and one opened meanwhile lands
//     on the last page, where sorting by update would move it and skip
//     another. The issues are sorted by update after.
//   - Conversations. An issue's and a pull request's are alike issue
//     comments, ids the repository's; Thread.Pull changes nothing. Anyone
//     who may see a public repository may comment in it.
//   - Since. GitHub documents its since as "after": azolla asks for a
//     second earlier and drops what it returns before since, so that
//     since is at or after, in whole seconds, as the seam says.
//   - Checks. Commit statuses (the combined status, latest per context) and
//     check runs (latest per name) are both checks. A check run queued or in
//     progress is pending; one concluded success, neutral or skipped
//     succeeded; every other conclusion (failure, timed_out, cancelled,
//     action_required, startup_failure, stale) failed.
//   - Permissions. Permission asks GitHub's "repository permissions for a
//     user" (GET /repos/{owner}/{repo}/collaborators/{user}/permission),
//     which counts every grant: the repository's, its teams', the
//     organisation's and the enterprise's. Its role_name decides when it is
//     one of GitHub's roles: admin, maintain and write are themselves,
//     triage and read are read. A custom role is read by the legacy
//     permission beside it, the base role it inherits (admin, write, read
//     or none; maintain counts as write there, triage as read). A 404 (not
//     a collaborator, or no such user) is forge.PermissionNone, and so is
//     the 200 with permission none GitHub also gives a stranger; an answer
//     neither field explains is an error. GitHub answers this only to a
//     token with push access (otherwise 403: forge.ErrUnauthorized). A 404
//     cannot tell a stranger from a repository the token does not see;
//     the Forge's other calls fail on the latter, as forge.ErrNotFound.
//   - Teams. TeamMember takes "org/team-slug". It reads the team first
//     (GET /orgs/{org}/teams/{slug}), so that a team GitHub does not know,
//     or does not show the token (only the organisation's members see its
//     teams), is forge.ErrNotFound, then the membership
//     (GET /orgs/{org}/teams/{slug}/memberships/{user}), where 404 is no
//     member. Only state active counts; pending is an invitation not yet
//     accepted. Members of child teams are members, as GitHub counts them.
//   - Tokens. Besides what the pull requests need, a classic token needs
//     the repo scope for permissions and read:org for teams; a
//     fine-grained token or a GitHub App needs the repository's Metadata
//     (read) for permissions and the organisation's Members (read) for
//     teams.
//   - Rate limits. A primary limit (403 or 429 with x-ratelimit-remaining 0)
//     asks for a wait until x-ratelimit-reset; a secondary one (403 or 429
//     whose message or documentation URL says so, or with Retry-After) for
//     Retry-After seconds, else until x-ratelimit-reset, else a minute: the
//     reading go-github makes too, so that its own refusal of calls inside
//     the window agrees with this package's. A wait up to Options.MaxWait
//     is slept through and the call retried, three times at most; a longer
//     one, or a fourth limit in a row, is returned as *forge.RateLimitError.
//   - Errors. 401 is forge.ErrUnauthorized, and so is a 403 that is not a
//     rate limit (the token lacks a scope or the repository is read-only: a
//     retry does not help); 404 is forge.ErrNotFound. go-github's errors name
//     the request's method and URL, never its headers, so the token, which
//     travels only in the Authorization header, is never in one.
package github
