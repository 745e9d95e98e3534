-- 0006_chunk_storage.sql: packed float64 rows do not compress (pglz gains
-- a few per cent on random mantissas at a large CPU cost on every upload),
-- so chunks are stored out of line without compression.
ALTER TABLE dataset_chunks ALTER COLUMN data SET STORAGE EXTERNAL;
