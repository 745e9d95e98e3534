-- 0010_audit_keys.sql: the operators' audit trail, key management and
-- declared feature names (issue 8 items 11, 12, 14).
--
-- audit_log: one row per state change, written in the transaction of the
-- change (service/audit.h).  Who: the key (NULL for the `dpoptd keys`
-- command, whose actor_role is 'operator'), its tenant and role; what:
-- action and its target (a dataset, a run, a key); when; from where (the
-- client's address, NULL for the command line); the request id.  detail
-- holds public parameters only (a budget, a role, a row count), never a
-- data value.  Append-only, like ledger_entries.
CREATE TABLE audit_log (
    id              bigserial PRIMARY KEY,
    at              timestamptz NOT NULL DEFAULT now(),
    tenant_id       text NOT NULL,
    actor_key_id    text,
    actor_role      text NOT NULL CHECK (actor_role IN ('owner', 'analyst', 'operator')),
    via             text NOT NULL CHECK (via IN ('api', 'cli')),
    action          text NOT NULL CHECK (action IN ('dataset.create', 'dataset.seal',
                        'dataset.patch', 'dataset.delete', 'key.create', 'key.revoke',
                        'run.submit', 'run.cancel')),
    dataset_id      uuid,
    run_id          uuid,
    key_id          text,
    request_id      text,
    client_address  text,
    detail          jsonb NOT NULL DEFAULT '{}',
    CHECK ((via = 'cli') = (actor_key_id IS NULL))
);
CREATE INDEX audit_log_tenant ON audit_log (tenant_id, id);
CREATE RULE audit_log_no_update AS ON UPDATE TO audit_log DO INSTEAD NOTHING;
CREATE RULE audit_log_no_delete AS ON DELETE TO audit_log DO INSTEAD NOTHING;

-- Keys: listing per tenant, and the key a rotation replaced.  A key is
-- valid while revoked_at IS NULL or in the future (a rotation's grace
-- period); every request reads the row, so a revocation holds on every
-- replica at once.
CREATE INDEX api_keys_tenant ON api_keys (tenant_id, created_at, id);
ALTER TABLE api_keys ADD COLUMN rotated_from text REFERENCES api_keys (id);

-- Runs across datasets, newest first (GET /v1/runs).
CREATE INDEX runs_tenant ON runs (tenant_id, created_at, id);

-- The names of the d feature columns, from the header row of a CSV upload:
-- declared by the owner, public once sealed, shown next to a result's x.
ALTER TABLE datasets ADD COLUMN feature_names text[];
