// Package dbqueue is the control plane's database transport: the
// controlplane.Transport azolla dev uses when no Redis is configured, over
// the store's job_messages table (store.JobStore's *JobMessage methods),
// and the baseline of benchmark B5.
//
// It keeps the Redis transport's semantics. Delivery is at least once and
// the job row, not the message, is the truth. A received message is
// pending until acknowledged (deleted); one left pending longer than
// MinIdle (more than the lease TTL; default twice it) is delivered again
// to whoever asks, as XAUTOCLAIM would. The caller acks only after the
// database transaction that settled, requeued or dead-lettered the job has
// committed.
//
// Receive checks the streams once, in priority order, then waits until
// the wait (capped at controlplane.MaxClaimWait) passes for either an
// Enqueue through this Transport (in-process, at once) or the next poll
// (PollInterval), which finds messages other processes wrote and pending
// messages that have become idle enough.
package dbqueue
