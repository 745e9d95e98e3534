/*
 * ledger.h - the privacy ledger (docs/privacy-model.md §4.1, §4.4), basic mode.
 *
 * Budgets and charges are exact decimals (PostgreSQL numeric): a charge
 * travels as the shortest decimal that reads back as the run's double, and
 * every algorithm calibrates its noise one ulp below that double, so the
 * decimal charged is never below what the run spends.  Every function here
 * runs inside the caller's transaction, which holds the ledger's row lock
 * (ledger_lock(), or datasets_meta(..., for_update = true) which takes it):
 * admission, charge and run insertion are one atomic step.  An admission
 * (runs.c) takes the lock and writes inside one SQL function,
 * dpopt_admit2() of migration 0014 (through dpopt_admit_lock() of 0012),
 * in the order below, so that it holds the lock for one round trip in both
 * modes ('renyi': the fit is checked in the statement with filter.c's
 * arithmetic; ledger_renyi_fit() checks a refusal again).  The
 * ledger_entries table is append-only.
 *
 * THE LOCK ORDER.  A ledger is the datasets row that holds a budget and its
 * spent totals: a dataset's own, or for a dataset created with
 * "share_budget_with" the row it shares (its root: coalesce(ledger_of, id);
 * there are no chains).  Every transaction that reads a ledger's totals to
 * decide something, or writes them (admission, cancel and refund, the Rényi
 * recomputation, PATCH of a budget, dataset delete, the seal's delta
 * check), takes its locks in this order and no other:
 *
 *   1. the ledger's root row, FOR NO KEY UPDATE (ledger_lock()), before the
 *      first statement that reads spent_* or budget_* or the filter (FOR
 *      SHARE where the ledger need only stay as it is: creating a dataset
 *      that shares it, which a delete of the root must not miss);
 *   2. then the dataset's own row when it is not the root (a sharer),
 *      FOR NO KEY UPDATE;
 *   3. then rows of runs (SELECT ... FOR UPDATE, UPDATE), and inserts into
 *      runs and ledger_entries;
 *   4. then advisory locks (the seal's content-hash lock).
 *
 * The one exception: an upload takes its per-dataset advisory lock when the
 * body starts, before step 1 at the seal.  It is safe only because that
 * lock is tried (pg_try_advisory_xact_lock: a busy dataset answers 409 at
 * once), never waited for; it must stay a try-lock.
 *
 * One ledger per transaction: a run's evaluation dataset is read without a
 * lock.  Workers (claim, lease renewal, finish, re-queue) touch rows of runs
 * only and hold no datasets lock, so they wait at step 3 at most.  Why this
 * order: every dataset of a ledger charges the one root row, so it is the
 * lock that serialises all of them; taking it first means no transaction
 * holding a sharer's row (or a run's) ever waits for the root while the
 * root's holder waits for that row.  Why FOR NO KEY UPDATE and never
 * FOR UPDATE: foreign keys into datasets (runs, ledger_entries, the
 * chunks an upload streams) take KEY SHARE, which it does not block.
 * Re-taking a lock the transaction already holds returns at once, so
 * ledger_lock() is idempotent.  Read-only views (GET budget, estimates)
 * take no lock: each reads one committed state.
 */
#ifndef SERVICE_LEDGER_H
#define SERVICE_LEDGER_H

#include <jansson.h>

#include "db.h"
#include "err.h"
#include "privacy/event.h"
#include "privacy/filter.h"

struct auth;     /* http.h */
struct auth_key; /* http.h */

/* Step 1 of the lock order: lock the row of the ledger that pays for
 * dataset_id (its root) until the transaction ends, and write its id to
 * ret_ledger_id (may be NULL).  tenant NULL: any tenant (internal callers
 * with an id the service read itself).  ERR_NOT_FOUND when there is no such
 * dataset; deleted datasets are found (their ledgers live on). */
enum err_code ledger_lock(struct db_conn *db, const char *tenant, const char *dataset_id,
			  char ret_ledger_id[37], struct err *e);

/* A float8[] literal of m doubles, "{a,b,...}", each exact (%.17g). */
#define LEDGER_ARRAY_TEXT (FILTER_MAX_ORDERS * 26 + 3)
void ledger_array_text(const double *v, unsigned m, char out[LEDGER_ARRAY_TEXT]);

/* Parse PostgreSQL's text of a float8[] into at most max doubles. */
enum err_code ledger_array_parse(const char *text, double *out, unsigned max, unsigned *ret_m,
				 struct err *e);

/* The filter of a 'renyi' dataset, from its row (the caller holds the
 * row lock when it will charge). */
enum err_code ledger_load_filter(struct db_conn *db, const char *dataset_id, struct filter *ret,
				 struct err *e);

/* The run's RDP curve on the filter's orders, rounded up.  An event
 * without a Rényi curve (approx) is ERR_MODE naming "algorithm". */
enum err_code ledger_rdp_on_filter(const struct filter *f, const struct dp_event_tree *ev,
				   double *ret_rdp, struct err *e);

/* The filter from the text of its three float8[] columns (orders, caps,
 * spent); ERR_INTERNAL naming dataset_id when they are malformed or of
 * different lengths. */
enum err_code ledger_filter_from_text(const char *orders, const char *caps, const char *spent,
				      const char *dataset_id, struct filter *ret, struct err *e);

/* The fit check of a run with curve rdp (ledger_rdp_on_filter()) against
 * the filter loaded under the ledger's lock: ERR_BUDGET with the per-order
 * headroom in the detail when it fits at no order; else the new spent
 * vector (ledger_array_text()) and the indicative spent epsilon at
 * budget_delta (db_double_text()), for dpopt_admit() (migration 0012) to
 * write.  runs.c calls it on a refusal of dpopt_admit2() (0014), whose SQL
 * check it must confirm. */
enum err_code ledger_renyi_fit(const struct filter *loaded, double budget_delta, const double *rdp,
			       char ret_spent[LEDGER_ARRAY_TEXT], char ret_eps[32], struct err *e);

/* Check a charge is chargeable: finite, epsilon > 0, delta >= 0 (fail
 * closed: never clamp); writes the decimal texts. */
enum err_code ledger_charge_text(double epsilon, double delta, char ret_eps[32], char ret_delta[32],
				 struct err *e);

/* The refusal of a 'basic' charge (eps, delta) that does not fit: ERR_BUDGET
 * naming "privacy", with what remains of both sums (dpopt_admit2()'s
 * 'budget' answer, migration 0014) in the message. */
enum err_code ledger_budget_refusal(const char *eps, const char *delta, const char *rem_eps,
				    const char *rem_delta, struct err *e);

/* Refund the charge of a queued run no worker ever claimed (it never
 * touched data): marks it refunded, appends the refund entry and lowers
 * the spent totals.  ERR_CONFLICT for any other run.  Takes the ledger's
 * lock itself (a caller that also locks the run's row takes it first). */
enum err_code ledger_refund(struct db_conn *db, const char *run_id, struct err *e);

/* Recompute the spent vector of the 'renyi' ledger that pays for
 * dataset_id as the upward-rounded sum of the charges of runs not refunded
 * (never by subtraction), and its indicative spent epsilon.  Inside the
 * caller's transaction; takes the ledger's lock itself (ledger_lock()), so
 * that no admission can commit a charge between the sum and the write. */
enum err_code ledger_recompute_renyi(struct db_conn *db, const char *dataset_id, struct err *e);

/* GET /v1/datasets/{id}/budget: totals, indicative spent/remaining
 * epsilon, the raw state of the mode (sums, or the filter's orders, caps,
 * spent vector and headroom) and one page of the append-only entries: at
 * most limit of them, oldest first, after cursor (NULL: from the first;
 * else a next_cursor an earlier page returned, ERR_INVALID naming "cursor"
 * when it is not one), and "next_cursor" (null on the last page).  One
 * statement, which also verifies key and fills *ret_auth (auth.h): a bad
 * key is ERR_UNAUTHENTICATED, whatever else is wrong.  Owned text. */
#define LEDGER_PAGE_DEFAULT 100
#define LEDGER_PAGE_MAX     1000
enum err_code ledger_view(struct db_conn *db, const struct auth_key *key, const char *dataset_id,
			  const char *cursor, unsigned limit, struct auth *ret_auth, char **ret,
			  struct err *e);

/* The JSON text of ledger entry row alias a, as the budget read shows it:
 * the expression 0013_ledger_view.sql's trigger stores in view at insert;
 * the read builds it for rows older than that migration (view NULL). */
#define LEDGER_ENTRY_JSON(a)                                                                       \
	"json_build_object('run_id', " a ".run_id, 'dataset_id', (SELECT r.dataset_id FROM runs r" \
	" WHERE r.id = " a ".run_id), 'kind', " a ".kind, 'epsilon', " a ".epsilon, 'delta', " a   \
	".delta, 'rdp', " a ".rdp, 'event', " a ".event, 'created_at', " a ".created_at)::text"

/* Whether cursor has the form of a ledger page's next_cursor (the decimal
 * id of an entry, 1 to 18 digits). */
bool ledger_cursor_valid(const char *cursor);

/* The filter part of a view: orders, caps, spent, headroom, indicative
 * spent and remaining epsilon.  Owned JSON. */
json_t *ledger_filter_json(const struct filter *f, double budget_epsilon, double budget_delta);

#endif /* SERVICE_LEDGER_H */
