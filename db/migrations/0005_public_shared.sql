-- 0005_public_shared.sql: public datasets, shared ledgers, and the task and
-- feature-count ranges of the data model (issue 4).
--
-- public: a dataset with no budget and no privacy promise, for evaluation
-- only (runs name it as eval_dataset_id; no run is ever charged to it).
-- ledger_of: the dataset whose ledger this one shares.  The owner links a
-- dataset to an existing ledger at creation (POST /v1/datasets
-- "share_budget_with"); every charge of a run on it goes to that ledger, so
-- the same individuals never get a second budget (docs/privacy-model.md §4.4).
-- A ledger is always a dataset with its own budget: no chains.
-- Public and linked datasets keep no budget of their own: their budget
-- columns are NULL, so a query that forgot to resolve the ledger reads
-- nothing rather than a wrong number.
ALTER TABLE datasets ADD COLUMN public boolean NOT NULL DEFAULT false;
ALTER TABLE datasets ADD COLUMN ledger_of uuid REFERENCES datasets (id);
ALTER TABLE datasets
    ALTER COLUMN accounting_mode DROP NOT NULL,
    ALTER COLUMN budget_epsilon DROP NOT NULL,
    ALTER COLUMN budget_delta DROP NOT NULL,
    ALTER COLUMN spent_epsilon DROP NOT NULL,
    ALTER COLUMN spent_delta DROP NOT NULL;
ALTER TABLE datasets ADD CONSTRAINT datasets_budget_owner CHECK (
    CASE WHEN public OR ledger_of IS NOT NULL
         THEN accounting_mode IS NULL AND budget_epsilon IS NULL AND budget_delta IS NULL
              AND spent_epsilon IS NULL AND spent_delta IS NULL AND filter_orders IS NULL
              AND filter_caps IS NULL AND spent_rdp IS NULL
         ELSE accounting_mode IS NOT NULL AND budget_epsilon IS NOT NULL
              AND budget_delta IS NOT NULL AND spent_epsilon IS NOT NULL
              AND spent_delta IS NOT NULL END);
ALTER TABLE datasets ADD CONSTRAINT datasets_public_unlinked
    CHECK (NOT (public AND ledger_of IS NOT NULL));
ALTER TABLE datasets ADD CONSTRAINT datasets_not_own_ledger CHECK (ledger_of <> id);
CREATE INDEX datasets_ledger_of ON datasets (ledger_of) WHERE ledger_of IS NOT NULL;

ALTER TABLE datasets DROP CONSTRAINT datasets_task_check;
ALTER TABLE datasets ADD CONSTRAINT datasets_task_check
    CHECK (task IN ('binary', 'regression', 'multiclass', 'unlabeled'));
ALTER TABLE datasets DROP CONSTRAINT datasets_n_features_check;
ALTER TABLE datasets ADD CONSTRAINT datasets_n_features_check CHECK (n_features >= 0);
