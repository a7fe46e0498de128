// Package domain holds the words the lifecycle speaks in: its records
// (objective, event, context snapshot, workorder, output bundle, run record,
// pause state, claim, capture, pull request, candidate, job), their statuses
// and ids, and the errors callers branch on. Every other package shares
// them: the store reads and writes them, workflows decide on them,
// activities pass them, the CLI prints them.
//
// A record's JSON form is what its schemas/*.schema.json describes; the
// store validates it before every write. Timestamps are UTC with
// microsecond precision, what both backends store exactly.
//
// domain imports nothing of azolla but textsafe: no database, no Temporal,
// no executor. It is the ground floor the rest stands on (River's
// rivertype plays the same part).
package domain
