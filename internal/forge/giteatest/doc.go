// Package giteatest runs a real Gitea for the tests of the Gitea forge
// (internal/forge/gitea) and for `make forge-dev`: built from its Go module
// at a pinned version, started on the local PostgreSQL, with an admin user
// (azolla's side), a reviewer user and a fresh repository per test.
//
// Building: Gitea's go.mod carries replace directives, so `go install
// module@version` refuses it. Binary downloads the module, builds it in a
// copy, and keeps the binary and the assets it reads at run time
// (templates, options, public: the build has no bindata tag) under
// $(go env GOCACHE)/azolla-gitea/<version>. The first build takes minutes;
// every later one finds the directory and takes no time. A lock file
// guards the build, since `go test ./...` starts several test binaries at
// once.
//
// Running: Start writes an app.ini of its own (no SSH, offline, in-process
// queues, no indexer, no start-up cron jobs), creates a database
// gitea_<random> that Close drops, runs `gitea migrate`, creates the users
// and their tokens with Gitea's CLI, then serves on a free port of
// 127.0.0.1 and waits until the API answers.
//
// Tests that need the server fail under CI=true when PostgreSQL is
// unreachable and are skipped elsewhere, saying why.
package giteatest
