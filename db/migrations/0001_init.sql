-- 0001_init.sql: tenants and keys, datasets and their rows, runs (the work
-- queue), and the append-only privacy ledger.  Migrations are append-only:
-- never edit a released file, add 0002_*.sql instead.  dpoptd wraps each
-- file in a transaction under an advisory lock (service/migrate.c).

CREATE TABLE tenants (
    id          text PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9_.-]{1,64}$'),
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- A key is "dpk_<id>_<secret>"; only SHA-256 of the whole key is stored.
CREATE TABLE api_keys (
    id          text PRIMARY KEY,
    tenant_id   text NOT NULL REFERENCES tenants (id),
    role        text NOT NULL CHECK (role IN ('owner', 'analyst')),
    key_hash    bytea NOT NULL CHECK (length(key_hash) = 32),
    created_at  timestamptz NOT NULL DEFAULT now(),
    revoked_at  timestamptz
);

-- Budgets are exact decimals (numeric): ten charges of 0.1 fit 1.0.
CREATE TABLE datasets (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id        text NOT NULL REFERENCES tenants (id),
    name             text NOT NULL,
    spec             jsonb NOT NULL,          -- the normalised public schema and bounds
    n_features       integer NOT NULL CHECK (n_features > 0),
    task             text NOT NULL CHECK (task IN ('binary', 'regression')),
    accounting_mode  text NOT NULL CHECK (accounting_mode IN ('basic', 'renyi')),
    budget_epsilon   numeric NOT NULL CHECK (budget_epsilon > 0),
    budget_delta     numeric NOT NULL CHECK (budget_delta >= 0 AND budget_delta < 1),
    spent_epsilon    numeric NOT NULL DEFAULT 0 CHECK (spent_epsilon >= 0),
    spent_delta      numeric NOT NULL DEFAULT 0 CHECK (spent_delta >= 0),
    state            text NOT NULL DEFAULT 'created'
                     CHECK (state IN ('created', 'sealed', 'deleted')),
    n_rows           bigint CHECK (n_rows > 0),
    created_at       timestamptz NOT NULL DEFAULT now(),
    sealed_at        timestamptz,
    deleted_at       timestamptz,
    CHECK (spent_epsilon <= budget_epsilon AND spent_delta <= budget_delta),
    CHECK ((state = 'created') = (n_rows IS NULL) OR state = 'deleted')
);
CREATE INDEX datasets_tenant ON datasets (tenant_id, created_at, id);

-- Clipped rows, packed: each chunk is n_rows records of (n_features + 1)
-- little-endian float64 (features, then the label).
CREATE TABLE dataset_chunks (
    dataset_id  uuid NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
    chunk_no    integer NOT NULL CHECK (chunk_no >= 0),
    n_rows      integer NOT NULL CHECK (n_rows > 0),
    data        bytea NOT NULL,
    PRIMARY KEY (dataset_id, chunk_no)
);

CREATE TABLE runs (
    id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    dataset_id        uuid NOT NULL REFERENCES datasets (id),
    tenant_id         text NOT NULL REFERENCES tenants (id),
    algorithm         text NOT NULL,
    request           jsonb NOT NULL,         -- normalised request (defaults filled)
    plan              jsonb NOT NULL,         -- event, steps, parameters used
    charge_epsilon    numeric NOT NULL CHECK (charge_epsilon > 0),
    charge_delta      numeric NOT NULL CHECK (charge_delta >= 0),
    state             text NOT NULL DEFAULT 'queued'
                      CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
    steps_done        bigint NOT NULL DEFAULT 0,
    steps_total       bigint NOT NULL CHECK (steps_total > 0),
    result            jsonb,
    error_code        text,
    idempotency_key   text,
    request_hash      bytea,
    attempts          integer NOT NULL DEFAULT 0,
    lease_owner       text,
    lease_expires_at  timestamptz,
    cancel_requested  boolean NOT NULL DEFAULT false,
    refunded          boolean NOT NULL DEFAULT false,
    created_at        timestamptz NOT NULL DEFAULT now(),
    started_at        timestamptz,
    finished_at       timestamptz,
    UNIQUE (tenant_id, idempotency_key)
);
CREATE INDEX runs_queued ON runs (created_at) WHERE state = 'queued';
CREATE INDEX runs_running ON runs (lease_expires_at) WHERE state = 'running';
CREATE INDEX runs_dataset ON runs (dataset_id, created_at, id);

-- Append-only: a refund is a new row, never an update or a delete.
CREATE TABLE ledger_entries (
    id          bigserial PRIMARY KEY,
    dataset_id  uuid NOT NULL REFERENCES datasets (id),
    run_id      uuid REFERENCES runs (id),
    kind        text NOT NULL CHECK (kind IN ('charge', 'refund')),
    epsilon     numeric NOT NULL CHECK (epsilon >= 0),
    delta       numeric NOT NULL CHECK (delta >= 0),
    event       jsonb,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ledger_entries_dataset ON ledger_entries (dataset_id, id);

CREATE RULE ledger_entries_no_update AS ON UPDATE TO ledger_entries DO INSTEAD NOTHING;
CREATE RULE ledger_entries_no_delete AS ON DELETE TO ledger_entries DO INSTEAD NOTHING;
