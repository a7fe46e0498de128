// Package topology proves docker-compose.yml's production topology without
// Docker (make test-topology): a Temporal server on PostgreSQL, started as
// its own process (./temporalserver, go.temporal.io/server at the version
// the compose file runs), with Temporal's schema put into fresh databases by
// the server module's own schema tooling; then azolla temporal setup and
// azolla migrate, and as separate processes azolla control-plane, two azolla
// worker and one azolla remote-worker, on a PostgreSQL store and Redis.
//
// Every process takes its environment from the compose service it stands
// for (compose.ServiceEnv), rewritten by one documented mapping from the
// compose network to this host (local in localize_test.go), so the
// file and the proof cannot drift apart.
//
// The tests: the server alone answers CheckHealth on its fresh schemas;
// twenty objectives, local and remote, reach DONE through a worker and the
// control plane SIGKILLed mid-run, and azolla verify is clean; and the same
// processes against the server's frontend on TLS, then mTLS, then
// plaintext, behind an API-key check, with the control plane on mTLS, each
// wrong setting refused with an error naming the setting that fixes it.
//
// The tests run only when AZOLLA_TEST_TOPOLOGY=1 (make test-topology sets
// it); they then fail under CI=true when PostgreSQL or Redis is down, and
// are skipped elsewhere.
//
// BenchmarkTopology (make bench, bar TP in docs/benchmarks.md) sets
// lifecycles per second on this topology against azolla dev, both up, in
// alternating rounds of the same workload. Being a benchmark it runs only
// when asked for, without AZOLLA_TEST_TOPOLOGY, and fails and skips as the
// tests do.
package topology
