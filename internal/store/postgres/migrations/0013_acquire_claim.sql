-- Claim acquisition in one call (docs/protocol/claims.md): create the
-- claim, or take it over if its lease has ended, or refuse. A statement
-- that both inserts and updates runs two lookups and two modifying plans
-- even when it refuses, the common answer under contention; this function
-- looks the row up once and runs only the write it needs. It returns the
-- new claim_version, or NULL when it refuses.
--
-- The lookup only chooses the branch. Each write keeps its own guard, so
-- two acquirers can never both succeed: the UPDATE re-checks the expiry
-- on the row it locks (a row taken meanwhile no longer matches), and the
-- INSERT does nothing when another acquirer created the row first. At
-- worst an acquirer that raced a release or a creation is refused, which
-- the protocol allows. A refusal writes nothing.
CREATE FUNCTION azolla_acquire_claim(rtype TEXT, rid TEXT, owner TEXT, lease_end TIMESTAMPTZ, at TIMESTAMPTZ)
RETURNS BIGINT LANGUAGE plpgsql AS $body$
DECLARE
    expired BOOLEAN;
    version BIGINT;
BEGIN
    SELECT lease_expires_at <= at INTO expired FROM claims WHERE resource_type = rtype AND resource_id = rid;
    IF NOT FOUND THEN
        INSERT INTO claims (resource_type, resource_id, owner_id, lease_expires_at, heartbeat_at, claim_version, released_at)
        VALUES (rtype, rid, owner, lease_end, at, 1, NULL)
        ON CONFLICT (resource_type, resource_id) DO NOTHING
        RETURNING claim_version INTO version;
    ELSIF expired THEN
        UPDATE claims SET owner_id = owner, lease_expires_at = lease_end, heartbeat_at = at,
            claim_version = claim_version + 1, released_at = NULL
        WHERE resource_type = rtype AND resource_id = rid AND lease_expires_at <= at
        RETURNING claim_version INTO version;
    END IF;
    RETURN version;
END
$body$;
