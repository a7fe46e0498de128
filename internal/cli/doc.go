// Package cli is azolla's command line: one cobra command per subcommand,
// thin over the packages that do the work. It takes the embedded Temporal
// server as an injected StartDevServer, so that only cmd/azolla links the
// server and the command tests build in seconds.
package cli
