/*
 * solve.h - `dpoptd solve`: the algorithms on local files, without the
 * service or a database.
 *
 *   dpoptd solve --data FILE --format csv|libsvm --schema FILE.json
 *                --algorithm NAME --objective NAME|JSON --constraint KIND:K=V,...
 *                --epsilon E --delta D [--params JSON] [--mode renyi|basic]
 *                [--acknowledge-large-delta]
 *                [--predict ROWS [--save-model FILE.json]]
 *   dpoptd solve --model FILE.json --predict ROWS
 *                [--eval FILE [--eval-format csv|libsvm]]
 *   dpoptd solve --list
 *
 * The same path as the API, in one process: the schema file holds the
 * "schema" and "bounds" members of POST /v1/datasets (service/schema.h);
 * the rows go through the same parsers, validation and clipping
 * (service/rows.h); the run request is built from the options and goes
 * through the service's own pipeline (run_pipeline.h: the request parse,
 * the δ < 1/n check, the plan with its accountant and calibration, the
 * run with the service's noise); the output is the "result" member a run
 * of the API would have (run_pipeline_run()), plus "evaluation" on
 * the --eval file, which the caller vouches is public.  Noise comes from
 * OpenSSL, as in the service: a run cannot be replayed by a seed.
 *
 * Every key of the API's run request has its option (algorithm, objective,
 * constraints.x/y, privacy, params; eval_dataset_id is --eval), and so
 * have the dataset keys a run reads: accounting_mode is --mode and
 * acknowledge_large_delta is --acknowledge-large-delta (δ >= 1/n allowed).
 *
 * Predictions (service/model.h): --save-model writes the solved run's model
 * document (as GET /v1/runs/{id}/model, with "run_id": null); --predict
 * scores the rows of ROWS (CSV with the dataset's columns minus the label,
 * or JSON {"rows": [...]} when the file starts with '{') with the run just
 * solved, into the result's "predictions", or with the document of --model
 * alone (no --data, no run), printing {"predictions", "n_rows"}.
 *
 * Progress: a run still going after one second prints "dpoptd solve: step
 * DONE / TOTAL" lines on stderr (at most two a second, and the last step).
 * Steps are public (alg.h): the lines carry no data.  The environment
 * variable DPOPTD_SOLVE_PROGRESS_AFTER_MS replaces the one second (tests).
 *
 * Exit status: 0 and the result on stdout; 1 and {"error": {...}} (code,
 * message, field) on stderr when the input is refused or the run fails;
 * 2 on a usage error.
 */
#ifndef SERVICE_SOLVE_H
#define SERVICE_SOLVE_H

int solve_main(int argc, char **argv);

#endif /* SERVICE_SOLVE_H */
