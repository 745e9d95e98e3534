-- 0002_limits.sql: delta sanity and work limits (docs/privacy-model.md §4.4).
-- large_delta_ok: the owner acknowledged a budget delta >= 1/n at creation.
-- work: the run's per-record evaluations plus noise draws (public), and the
-- timeout derived from it.
ALTER TABLE datasets ADD COLUMN large_delta_ok boolean NOT NULL DEFAULT false;
ALTER TABLE runs ADD COLUMN work double precision NOT NULL DEFAULT 0 CHECK (work >= 0);
ALTER TABLE runs ADD COLUMN timeout_seconds integer NOT NULL DEFAULT 86400
    CHECK (timeout_seconds > 0);
