-- 0007_layout.sql: how a dataset's rows are stored (service/rows.h):
-- 'dense' records from CSV uploads, 'csr' (sparse) records from LIBSVM
-- uploads; nnz counts the stored non-zeros of a 'csr' dataset, set at the
-- seal with n_rows, so a worker sizes its arrays before loading.
ALTER TABLE datasets ADD COLUMN layout text NOT NULL DEFAULT 'dense'
    CHECK (layout IN ('dense', 'csr'));
ALTER TABLE datasets ADD COLUMN nnz bigint CHECK (nnz >= 0);
