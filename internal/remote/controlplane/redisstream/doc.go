// Package redisstream is the control plane's Redis Streams transport
// (controlplane.Transport over github.com/redis/go-redis/v9).
//
// Delivery is at least once; the database is the truth. Each stream name
// maps to the key Prefix+"stream:"+name, read by one consumer group
// (Group) in which every control-plane instance is a consumer.
//
//   - Enqueue: XADD key MAXLEN ~ MaxLen * job_id <id> enqueue_id <id>. A
//     message trimmed before it was read is lost to the transport; the
//     reaper finds its job QUEUED with no message (State: Exists=false)
//     and enqueues it again.
//   - Receive: each stream in priority order, without blocking: first
//     XAUTOCLAIM of an entry pending longer than MinIdle (its consumer
//     crashed), then XREADGROUP of a new entry. Then one XREADGROUP
//     BLOCK over all streams, the wait capped at controlplane.MaxClaimWait
//     and below the client's read timeout (a BLOCK at or past it would
//     surface as an i/o timeout, not an empty read). A missing group
//     (NOGROUP: a flushed or restarted Redis) is created again, from id 0.
//   - Ack: XACK + XDEL in one MULTI, so neither the pending list nor the
//     stream grows. The caller acks only after the database transaction
//     that settled, requeued or dead-lettered the job has committed.
//
// MinIdle must exceed the lease TTL (default twice it): a message is taken
// from another instance's pending list only once the lease it led to has
// expired, and the job row still decides whether it means anything.
package redisstream
