// Package gitlab is forge.Forge on GitLab's REST API v4, through
// gitlab.com/gitlab-org/api/client-go. A pull request is a merge request;
// its Number is the merge request's iid. Package gitlabfake is the
// in-memory GitLab the tests run the conformance suite against.
//
// # Opening
//
// OpenOrAdopt lists the project's opened merge requests from the head
// branch onto the base branch and adopts the one with the lowest iid. Only
// when there is none does it create one: a draft by the title prefix
// "Draft: " (the REST API has no draft flag on create), labels as one comma
// list, reviewers as reviewer_ids looked up by username. GitLab creates a
// label it does not know instead of refusing it, so OpenOrAdopt searches
// each label first and refuses to create with labels the project and its
// groups do not have, naming them; an unknown reviewer is refused the same
// way. A create GitLab refuses with 409 "Another open merge request already
// exists for this source branch" lost a race: the list is read again and
// that merge request adopted.
//
// Title is reported without GitLab's draft prefix ("Draft:", "[Draft]",
// "(Draft)") when the merge request is a draft, and Update puts "Draft: "
// back in front of the new title of a draft, so that renaming a draft does
// not mark it ready.
//
// # Reviews
//
// GitLab has no review objects. A review submitted in GitLab's UI publishes
// the reviewer's draft notes (one DiffNote per line comment), then the
// summary as a plain note, then the verdict as a system note: "approved
// this merge request", or "requested changes" (GitLab 17, which also sets
// the reviewer's state to requested_changes). Reviews reads the merge
// request's notes oldest first and folds them back into reviews:
//
//   - A review is a run of consecutive notes by one author other than
//     azolla's user (GET /user). The run ends at its author's verdict, at a
//     note by anyone else (azolla's own comments included), or at the end
//     of the notes read.
//   - Its state is its verdict: "approved this merge request" is
//     approved, a system note starting "requested changes" is changes
//     requested, "unapproved this merge request" (an approval withdrawn) is
//     dismissed; a run without a verdict is commented. A verdict with no
//     notes before it is a review of its own.
//   - DiffNotes are its line comments: position.new_path (old_path for a
//     removed file), new_line, old_line. Every other note is its body, the
//     notes joined by a blank line.
//   - Its ID is its first note's id, SubmittedAt its last note's time, and
//     CommitSHA the head_sha of its first DiffNote's position.
//   - System notes other than the verdicts ("added 1 commit", "changed the
//     description") are not reviews and do not end a run.
//
// Were a verdict written before the notes it goes with, they would come
// back as two reviews, the verdict alone and then the notes as commented:
// the grouping differs, no verdict or comment is lost.
//
// The reviewer states of GET /merge_requests/:iid/reviewers and the
// approvals API are not used: they say where a reviewer stands now, and a
// reader that must return every review once, oldest first, needs the
// events, which the system notes are.
//
// The cursor is the highest note id read, in decimal; the notes list is
// read with sort=asc so that notes created while it is paged land on its
// last page and none is skipped. A review read while GitLab is still
// publishing it comes back as two reviews (the notes so far as commented,
// the rest with the verdict); no note is lost or read twice.
//
// # Issues and conversations
//
// GitLab numbers a project's issues (#N) apart from its merge requests
// (!N), so a Thread says which: Pull picks the merge request's notes, else
// the issue's. Issue reads issues only; a merge request's iid that no
// issue has is forge.ErrNotFound, and one that an issue has too reads that
// issue.
//
// Issues lists every state, updated_after since in whole seconds (GitLab's
// "on or after"), ordered by created_at ascending: an issue updated while
// the pages are read keeps its place and one opened meanwhile lands on the
// last page, where ordering by updated_at would move it and skip another.
// The issues are sorted by update after.
//
// Comments are the notes, oldest first, without system notes ("added 1
// commit", the verdicts) and DiffNotes (a review's line comments). The
// notes API takes no since: every page is read and the notes updated
// before since dropped. A review's summary is a plain note, so on a merge
// request it is a comment as well as the body of a review (Reviews): GitLab
// has nothing that tells the two apart.
//
// # Checks
//
// Checks reads every commit status of the commit (all=true, paged), CI
// jobs included, and keeps the latest (highest id) per name: success and
// skipped are success; failed is failure, or success when the job may fail
// (allow_failure, GitLab's "passed with warnings"); canceled is failure;
// manual is pending unless it may fail, when it blocks nothing and counts
// as success; created, pending, running and every other status are
// pending. The merge request's head pipeline is not read separately: its
// jobs are among the commit's statuses.
//
// # Permissions and groups
//
// Permission looks the user up by username (GET /users?username=; a user
// GitLab does not know is PermissionNone) and reads their role with GET
// /projects/:id/members/all/:user_id, which counts roles inherited from
// the project's groups and given by inviting a group. Access levels map as
// forge.Permission says: Guest (10), Planner (15) and Reporter (20) are
// read, Developer (30) is write, Maintainer (40) maintain, Owner (50)
// admin; minimal access (5), no membership (404) and a member whose
// account is not active (blocked, deactivated) are none. The client
// library drops the body of a 404, so "not a member" and "no such
// project" look alike: a project azolla's token cannot see reads as no
// one's permission, which trusts no one, while every other call says
// forge.ErrNotFound.
//
// TeamMember takes a team to be a group's full path ("acme/reviewers").
// The members endpoint answers 404 for an unknown group and for a user who
// is not a member alike, so the group is read first (GET /groups/:id,
// with_projects=false): a 404 is forge.ErrNotFound naming it. Then GET
// /groups/:id/members/all/:user_id, which counts the members of the
// group's parents too: an active member at Guest or above is in the team;
// a 404, or a user GitLab does not know, is not.
//
// Reading users, groups and members needs only the read_api scope (api,
// which azolla's token holds to write, includes it). GitLab shows members
// of what azolla's account may see: a private group it is not in is
// forge.ErrNotFound, like one that does not exist.
//
// # Errors and rate limits
//
// 401, and 403 insufficient_scope, are forge.ErrUnauthorized; 404 is
// forge.ErrNotFound. The client library's own retries and its pacing by
// RateLimit-Limit are turned off: a 429 is waited out here, for
// Retry-After (or until RateLimit-Reset, or a minute when GitLab names
// neither), through Options.Sleep, as long as the waits of one call add up
// to no more than Options.MaxWait; past that the call returns a
// *forge.RateLimitError. Any other failure is returned at once for the
// caller's retry policy. The token travels only in the PRIVATE-TOKEN
// header; errors name the request's method and URL, never its headers.
package gitlab
