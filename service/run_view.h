/*
 * run_view.h - the SQL expression of a run's JSON view.  A macro only, no
 * includes: tests/integration/test_api.c includes it too.
 */
#ifndef SERVICE_RUN_VIEW_H
#define SERVICE_RUN_VIEW_H

/* The declared feature names of the run's dataset (datasets.feature_names,
 * from a CSV header), as a member to add to its result; {} when none. */
#define RUN_FEATURE_NAMES                                                                          \
	"coalesce((SELECT jsonb_build_object('feature_names', to_jsonb(fd.feature_names))"         \
	" FROM datasets fd WHERE fd.id = r.dataset_id AND fd.feature_names IS NOT NULL),"          \
	" '{}'::jsonb)"

/* The JSON view of a row of runs r, as GET /v1/runs/{id} shows it.  The
 * result appears only once the run succeeded; errors carry a code, never
 * an algorithm's message.  0015_run_view.sql's trigger computes this
 * expression (over NEW) at every INSERT and UPDATE of a run and stores the
 * text in runs.view, which the reads select: every poll no longer builds
 * it (the test test_run_view_text checks the stored text equals it). */
#define RUN_VIEW_JSON                                                                              \
	"json_build_object('id', r.id, 'dataset_id', r.dataset_id, 'algorithm', r.algorithm,"      \
	" 'state', r.state, 'cancel_requested', r.cancel_requested,"                               \
	" 'progress', json_build_object('steps_done', r.steps_done,"                               \
	"                               'steps_total', r.steps_total),"                            \
	" 'request', r.request, 'plan', r.plan,"                                                   \
	" 'privacy', json_build_object('event', r.plan->'event',"                                  \
	"   'charged', json_build_object('epsilon', r.charge_epsilon, 'delta', r.charge_delta),"   \
	"   'refunded', r.refunded),"                                                              \
	" 'result', CASE WHEN r.state = 'succeeded' THEN r.result || " RUN_FEATURE_NAMES " END,"   \
	" 'error', CASE WHEN r.error_code IS NOT NULL"                                             \
	"   THEN json_build_object('code', r.error_code) END,"                                     \
	" 'created_at', r.created_at, 'started_at', r.started_at,"                                 \
	" 'finished_at', r.finished_at)::text"

#endif /* SERVICE_RUN_VIEW_H */
