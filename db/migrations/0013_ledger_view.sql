-- 0013_ledger_view.sql: each ledger entry's JSON, as GET
-- /v1/datasets/{id}/budget shows it, written once when the entry is
-- inserted (issue 17, the read path).
--
-- Entries never change (the rules of 0001 make UPDATE and DELETE do
-- nothing), nor does the dataset of the run an entry names, so the text
-- is fixed at insert and the budget read concatenates stored texts
-- instead of building 8-member objects and printing numerics, uuids and
-- timestamps per entry per request (profile: json_build_object was 36 %
-- of PostgreSQL's CPU on a 30-entry page, and the statement alone ran at
-- 0.12 of pgbench -S).  A trigger fills it, so every INSERT path (the
-- admission, a refund, a deletion's refunds) does without code changes.
-- Rows older than this migration keep view NULL and the read builds
-- theirs as before (service/ledger.h, LEDGER_ENTRY_JSON: the same
-- expression; tests/integration/test_budget_paging checks both agree).
-- created_at is printed in the inserting session's TimeZone, which is
-- the cluster's unless a role or database sets another: the same text the
-- read printed before, for a cluster whose TimeZone does not change.
ALTER TABLE ledger_entries ADD COLUMN view text;

CREATE FUNCTION ledger_entry_view() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.view := json_build_object('run_id', NEW.run_id,
        'dataset_id', (SELECT r.dataset_id FROM runs r WHERE r.id = NEW.run_id),
        'kind', NEW.kind, 'epsilon', NEW.epsilon, 'delta', NEW.delta, 'rdp', NEW.rdp,
        'event', NEW.event, 'created_at', NEW.created_at)::text;
    RETURN NEW;
END
$$;

CREATE TRIGGER ledger_entries_view BEFORE INSERT ON ledger_entries
    FOR EACH ROW EXECUTE FUNCTION ledger_entry_view();
