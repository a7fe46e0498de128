// Package runreport reads the run report of an executor run: the JSON
// document (schemas/run_report.schema.json) an executor may write to
// $AZOLLA_REPORT_FILE, or that a preset derives from a headless agent's
// own machine-readable output (Claude Code, Codex, aider).
//
// Everything here is pure: bytes in, a Report or an error out. A report is
// information about a run, not part of its outcome, so callers record an
// error from this package as a note on the run and carry on; nothing here
// is a reason to fail a run. Every Report this package returns has passed
// the schema, whichever way it was made, so a hostile agent output (a
// negative cost, a path out of the artifact directory, a figure in the
// trillions) is refused in one place.
package runreport
