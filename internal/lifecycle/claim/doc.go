// Package claim is azolla's claim bridge: the claim/lease protocol (docs/protocol/claims.md)
// over the store's claims table, so every step that processes an EVENT or a
// WORKORDER holds an exclusive, expiring, auditable claim on it.
//
// # Protocol
//
// A claim row is keyed by (resource_type, resource_id) and carries owner_id,
// lease_expires_at, heartbeat_at and claim_version. Only store retention
// deletes a row, once its step is finished and its lease ended longer ago
// than any hold can last, so no holder of it is left; every other row stays
// and its claim_version only grows. A version names one hold exactly among
// the holds that can still write.
//
//   - Acquire: one call to the store that inserts the row, or takes it over
//     only if lease_expires_at <= now; each of those writes is atomic and
//     re-checks its own condition, so two callers never both succeed. While
//     a live claim exists it reports "not acquired" (no error) and the
//     caller skips the resource.
//   - Renew: compare-and-swap on (owner_id, claim_version); it extends the
//     lease and bumps the version. A failed swap is a *LeaseLostError: the
//     holder must stop mutating shared state. A Lease's keeper renews every
//     TTL/3 at most and cancels the holder's context the moment the lease is
//     lost, or the moment it lapses (lease_expires_at passes by the bridge's
//     clock) without a successful renewal. A lapsed lease is lost for good:
//     it is never renewed, even if nobody took the claim meanwhile.
//   - Fenced write: a terminal write runs in a transaction that first locks
//     the claim row and checks owner and version are still the holder's; if
//     the claim moved on, the write is refused and nothing is written.
//   - Release: only by the holder of the current version, only after the
//     durable write. It expires the lease now and bumps the version.
//   - Within: acquire, write and release in one transaction, for a step
//     whose work is a few statements; the claim is taken and given back at
//     the write's one commit.
//
// A renewal whose outcome is unknown (the connection dropped after the
// database applied it) leaves the lease fail-closed: its next renewal or
// fenced write reports the lease lost, the holder stops, and the claim lapses
// after its TTL. Cancelling a renewal's context does not cause this; a
// started renewal finishes and records the version it produced, unless the
// lease lapses first: a renewal the database has not answered by then is cut
// off, and the lease is lost.
//
// # States of one resource's claim row
//
//	              Acquire (no row)
//	   (none) ───────────────────────▶ HELD(v=1, owner A)
//	                                     │  │  ▲
//	                    Renew by A at v  │  │  │ Renew: v → v+1, lease extended
//	                                     │  └──┘
//	       Release by A at v: v → v+1    │            lease_expires_at <= now
//	RELEASED ◀───────────────────────────┤─────────────────────────▶ EXPIRED
//	   │                                                               │
//	   └────── Acquire by anyone: v → v+1, new owner ──────────────────┘
//	                       back to HELD
//
// A holder that was taken over (EXPIRED then HELD by B) still believes it
// holds version v; its Renew, fenced write and Release all fail on the
// version, which is the fencing rule that prevents split brain.
package claim
