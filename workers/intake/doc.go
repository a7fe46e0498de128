// Package intake is the forge as azolla's front door (docs/forge.md): the
// Service reads each configured repository's issues and the comments on
// them and on azolla's pull requests, turns an issue that matches
// forge.intake's triggers into one objective (or one capture), carries
// out "/azolla" commands from people the forge says may write to the
// repository, and keeps one status comment on each issue.
//
// Exactly once, wherever a process dies: an issue is taken in the store
// transaction that creates its objective, keyed by forge, repository and
// number (store.TakeIntake); a command's decision goes to the lifecycle
// under an update id derived from its comment, which the lifecycle takes
// once, and is recorded by the comment's id; a comment azolla posts
// (status, a refusal) carries a hidden marker and is looked for before it
// is posted. The service is led through the FORGE_INTAKE claim: one
// instance reads the forges however many workers run.
//
// Words are untrusted: an issue's text becomes the objective's text, and
// that is why the objective waits for a trusted approval (unless the
// repository approves its writers' issues itself); a command from anyone
// the trust rule (forge.Trust) does not trust gets one short reply and
// changes nothing.
//
// Like package bridge it is client-side code: it decides through the
// starter (every decision goes where the CLI's go) and may use the
// workflows package's names only. Files: service.go is the service and
// its pass, issues.go what an issue becomes, commands.go the commands,
// status.go the status comment.
package intake
