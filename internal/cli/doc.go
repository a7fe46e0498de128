// Package cli is azolla's command line: one cobra command per subcommand.
//
// A client command (objective, capture, manifest, track, inbox, pr,
// schedules, worker-token, gc) parses its flags and arguments, calls the
// package that does the work and prints the answer: as text, every stored
// string through textsafe, or with -o json as JSON (writeJSON). They share
// one preamble, withSession in session.go: check --output, check the
// flags, open the migrated store (on the objective args[0] names, or with
// Temporal, when asked), close it when the body returns. The rules they
// print live elsewhere: what waits for a human in lifecycle/inbox, the
// budget and its changes in lifecycle/budget, the commands of a pause's
// actions in lifecycle/pause, lifecycles and decisions in starter.
//
// What the package holds of its own:
//
//   - configuration: viper reads flags, AZOLLA_* variables and the config
//     file into one config.Config (config.go); no other package imports
//     viper;
//   - exit statuses, and an error printed as one safe line (exit.go);
//   - the wiring of the long-running processes, worker, control-plane,
//     remote-worker and dev: their ops servers and signals, and for dev the
//     demo records it seeds into an empty store (demo.go);
//   - temporal setup: the health wait, the namespace and the search
//     attributes registered on a cluster;
//   - verify, which opens the store without migrating it and hands it, with
//     the control plane's transport, to audit.
//
// It takes the embedded Temporal server as an injected StartDevServer, so
// that only cmd/azolla links the server and the command tests build in
// seconds. Only cmd/azolla imports it.
package cli
