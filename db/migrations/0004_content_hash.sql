-- 0004_content_hash.sql: budget laundering (docs/privacy-model.md §4.4).
-- content_hash: SHA-256-based multiset hash of the canonical clipped rows
-- (service/content_hash.c), set at the seal; a tenant cannot seal the same
-- rows twice under two budgets.
ALTER TABLE datasets ADD COLUMN content_hash bytea
    CHECK (content_hash IS NULL OR length(content_hash) = 32);
CREATE INDEX datasets_content ON datasets (tenant_id, content_hash)
    WHERE content_hash IS NOT NULL;
