-- 0003_renyi.sql: the Rényi filter ledger (docs/privacy-model.md §4.2).
-- A 'renyi' dataset keeps its filter grid, caps (rounded down) and spent
-- RDP vector (rounded up) in its own row, so admission stays one
-- transaction under the row lock.  Every charge records its RDP vector on
-- the same grid, so a refund recomputes spent_rdp from the entries that
-- remain instead of subtracting.  spent_epsilon holds the indicative spent
-- epsilon in 'renyi' mode (the exact state is the vector).
ALTER TABLE datasets ADD COLUMN filter_orders double precision[];
ALTER TABLE datasets ADD COLUMN filter_caps double precision[];
ALTER TABLE datasets ADD COLUMN spent_rdp double precision[];
ALTER TABLE datasets ADD CONSTRAINT datasets_renyi_state CHECK (
    accounting_mode <> 'renyi' OR (
        cardinality(filter_orders) BETWEEN 1 AND 24
        AND cardinality(filter_caps) = cardinality(filter_orders)
        AND cardinality(spent_rdp) = cardinality(filter_orders)));
ALTER TABLE ledger_entries ADD COLUMN rdp double precision[];
ALTER TABLE runs ADD COLUMN charge_rdp double precision[];
