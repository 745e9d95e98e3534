-- 0015_run_view.sql: each run's JSON, as GET /v1/runs/{id} shows it,
-- stored in the row whenever the row is written (issue 17, the read path).
--
-- The read used to build it per request: a 14-member json_build_object
-- over the run's jsonb request, plan and result (decompressed and printed
-- each time) and the dataset's feature names.  Profile at 64 connections:
-- json_build_object 27 % and the executor's start-up of that expression
-- 18 % of PostgreSQL's CPU; the statement alone (pgbench -M prepared, 64
-- clients) ran at 12.6 k/s against 24.8 k/s when it reads a stored text,
-- while pgbench -S ran at 24.0 k/s.  A run is written a few times in its
-- life (admission, claim, lease renewals with progress, finish, refund,
-- cancel) and read by every poll, so the text is made at write time.
-- Each write pays it: 2,000 UPDATEs of one run in one session took
-- 0.15-0.4 ms more each with the trigger than without (load 10-16 on
-- the 2 shared cores), about what five reads save.
--
-- A BEFORE trigger fills it on every INSERT and UPDATE, so every write
-- path (the admission function of 0012, the worker, cancel, refund,
-- deletion) does without code changes; the expression is the one the read
-- used (service/runs.h, RUN_VIEW_JSON, over NEW instead of r;
-- tests/integration/test_api.c test_run_view_text checks that they agree
-- in every state).  The result carries the dataset's feature names, read
-- from datasets when the run is written: a later change of a dataset's
-- feature_names rewrites its succeeded runs' texts (the second trigger).
-- Timestamps are printed in the writing session's TimeZone, which is the
-- cluster's unless a role or database sets another (as 0013's entries).
ALTER TABLE runs ADD COLUMN view text;

CREATE FUNCTION run_view() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.view := json_build_object('id', NEW.id, 'dataset_id', NEW.dataset_id,
        'algorithm', NEW.algorithm, 'state', NEW.state,
        'cancel_requested', NEW.cancel_requested,
        'progress', json_build_object('steps_done', NEW.steps_done,
                                      'steps_total', NEW.steps_total),
        'request', NEW.request, 'plan', NEW.plan,
        'privacy', json_build_object('event', NEW.plan->'event',
          'charged', json_build_object('epsilon', NEW.charge_epsilon, 'delta', NEW.charge_delta),
          'refunded', NEW.refunded),
        'result', CASE WHEN NEW.state = 'succeeded' THEN NEW.result
          || coalesce((SELECT jsonb_build_object('feature_names', to_jsonb(fd.feature_names))
                       FROM datasets fd WHERE fd.id = NEW.dataset_id
                       AND fd.feature_names IS NOT NULL), '{}'::jsonb) END,
        'error', CASE WHEN NEW.error_code IS NOT NULL
          THEN json_build_object('code', NEW.error_code) END,
        'created_at', NEW.created_at, 'started_at', NEW.started_at,
        'finished_at', NEW.finished_at)::text;
    RETURN NEW;
END
$$;

CREATE TRIGGER runs_view BEFORE INSERT OR UPDATE ON runs
    FOR EACH ROW EXECUTE FUNCTION run_view();

CREATE FUNCTION run_view_feature_names() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE runs SET view = NULL WHERE dataset_id = NEW.id AND state = 'succeeded';
    RETURN NULL;
END
$$;

CREATE TRIGGER datasets_run_view AFTER UPDATE OF feature_names ON datasets
    FOR EACH ROW WHEN (OLD.feature_names IS DISTINCT FROM NEW.feature_names)
    EXECUTE FUNCTION run_view_feature_names();

-- The runs written before this migration (the trigger computes each):
-- one UPDATE of every run, as long as rewriting the table once.
UPDATE runs SET view = NULL;
