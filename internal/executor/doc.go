// Package executor groups what runs an agent and judges what it wrote,
// from the workorder handed to a diazotroph to the sandboxed process and
// the report it leaves:
//
//   - diazotroph: the executor plugins (PATCH, TRIAGE, MANIFEST) behind one
//     Registry;
//   - patchgen: the generators a patch run asks for a change (a command
//     agent, an OpenAI-compatible model, a static patch);
//   - runreport: the agents' own reports (claude-code, codex, aider) read
//     into domain.RunReport;
//   - sandbox, egress, environment: where an untrusted command runs, what
//     network it may reach, and the prepared environment of its
//     repository;
//   - proc, redact, gitops, atomicfile: running a command so nothing
//     outlives it, masking secrets in what it printed, hardened git, and
//     files written whole or not at all.
//
// What they may import: package domain, schemas, strictjson, textsafe and
// one another. Never the store, the lifecycle's rules, the remote path,
// the CLI or Temporal: an executor is handed what it needs and hands back
// a result, and the activity around it does the storing.
package executor
