#!/bin/sh
# read_path.sh - the read path and admissions against this machine's own
# limit: PostgreSQL on the same cluster driven by pgbench, interleaved.
#
#   bench/read_path.sh [--seconds S] [--reps R] [--conns C] [--smoke]
#                      [--only ROW[,ROW...]] [--floor-conns F]
#                      [--build DIR | --dpoptd PATH --http-load PATH]
#
# Starts a private PostgreSQL (scripts/lib/pg.sh) and a release dpoptd on
# a free port, creates K = min(C, 64) basic and K renyi datasets of 200
# rows (and 30 ledger entries on the first basic one, which only
# budget_get reads: its history stays 30 entries), then, R times in turn, runs each
# pair below for S seconds with C connections (closed loop, bench/http_load
# for dpoptd, pgbench for the limit; the limit first, then dpoptd):
#
#   runs_get       GET /v1/runs/{id}                  vs pgbench -S
#   budget_get     GET /v1/datasets/{id}/budget       vs pgbench -S
#
# and with each GET row two floors, against the same pgbench -S figure:
#
#   runs_get_sql, budget_get_sql   pgbench -M prepared, C clients, running
#                  the exact statement the GET runs (captured from the
#                  server log, parameters and all): the database's own
#                  ceiling for that read, with no HTTP in between
#   http_static    GET /healthz (no key, no database) through http_load:
#                  the HTTP layer's and the load client's ceiling
#
# then
#
#   admit_one_*    POST .../runs, one dataset         vs one-row UPDATE
#   admit_spread_* POST .../runs, K datasets          vs UPDATE of a random
#                                                        row of 1000
#
# Each admission pair also measures its two floors (pgbench on a copy of
# the database, below: the rows an admission writes, and those plus a tiny
# run's claim and result; F clients, by default min(C, dpoptd's HTTP
# threads)), between the limit and dpoptd,
# and prints per row the median and range of dpoptd's rate, its p99, the
# limit's rate and p99, and the ratio of each pair (median and range), the
# load average before and after; per admission row each floor's rate and
# p99, floor / limit and dpoptd / floor; then the time to result of 40 tiny runs
# submitted one after the other (created_at to finished_at in the
# database: p50, p99, max).  Admitted runs are executed by dpoptd's
# workers meanwhile, as in production; each repetition and each admission
# pair starts once the queue is empty, so that no row pays for the backlog
# of runs an earlier row admitted.  --smoke: S = 1, R = 1, C = 8 (CI: that
# it runs and every figure is a number).  Defaults: S = 5, R = 3,
# C = 64.  --only runs_get,budget_get: those rows alone (each still paired
# with its limit, in the same order; a GET row brings its floors).
set -eu
cd "$(dirname "$0")/.."
ROOT=$(pwd)
. scripts/lib/pg.sh
. bench/lib.sh

SECONDS_=5 REPS=3 CONNS=64 BUILD="" BIN="" LOAD="" ONLY="" FCONNS=""
while [ $# -gt 0 ]; do
	case $1 in
	--seconds) SECONDS_=$2; shift 2 ;;
	--reps) REPS=$2; shift 2 ;;
	--conns) CONNS=$2; shift 2 ;;
	--smoke) SECONDS_=1; REPS=1; CONNS=8; shift ;;
	--only) ONLY=",$2,"; shift 2 ;;
	--floor-conns) FCONNS=$2; shift 2 ;;
	--build) BUILD=$2; shift 2 ;;   # a built build directory (relative to the root)
	--dpoptd) BIN=$2; shift 2 ;;    # or the two programs (meson's test)
	--http-load) LOAD=$2; shift 2 ;;
	*) echo "usage: $0 [--seconds S] [--reps R] [--conns C] [--smoke] [--only ROWS] [--floor-conns F]" \
		"[--build DIR | --dpoptd PATH --http-load PATH]" >&2; exit 2 ;;
	esac
done
bench_programs service/dpoptd bench/http_load
K=$CONNS
# The floors' clients: at most dpoptd's HTTP threads (DPOPT_HTTP_THREADS,
# 8 by default), the admissions it has in flight at once.  More clients
# than that on one row only lengthen PostgreSQL's queue for its lock (at
# 64 the one-dataset floor fell below dpoptd's own rate), so the floor
# would not bound dpoptd's rate from above.
[ -n "$FCONNS" ] || FCONNS=${DPOPT_HTTP_THREADS:-8}
[ "$FCONNS" -le "$CONNS" ] || FCONNS=$CONNS
[ "$K" -le 64 ] || K=64
[ "$K" -ge 2 ] || K=2
PGBIN=$(pg_bindir)

bench_workdir readpath
export DPOPT_RATE_LIMIT_PER_SECOND=0
bench_start readpath
psql "$PG_URL" -qc "CREATE DATABASE pgb" >/dev/null
PGB="$PGBIN/pgbench -h $WORK/pg -U dpopt"
$PGB -i -q -s 1 pgb >/dev/null 2>&1

# Different rows per dataset: the same rows in two datasets would have to
# share one ledger (the seal refuses them otherwise).
bench_rows_csv 200 5 $((2 * K))
cat >"$WORK/run.json" <<'JSON'
{"algorithm": "dp_sgd.one_pass", "objective": {"name": "logistic"},
 "constraints": {"x": {"kind": "l2_ball", "radius": 1}},
 "privacy": {"epsilon": 0.1, "delta": 1e-9}}
JSON
make_dataset() { # make_dataset MODE ROWS-INDEX -> id
	ds=$(curl -sf -X POST "$U/v1/datasets" -H "$H" -H 'Content-Type: application/json' \
		--data "{\"name\": \"rp\", \"schema\": {\"features\": 5, \"task\": \"binary\"},
		  \"bounds\": {\"feature_l2\": 1}, \"budget\": {\"epsilon\": 1000000, \"delta\": 0.001},
		  \"accounting_mode\": \"$1\"}" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
	curl -sf -X PUT "$U/v1/datasets/$ds/data" -H "$H" -H 'Content-Type: text/csv' \
		--data-binary @"$WORK/rows$2.csv" >/dev/null || return 1
	echo "$ds"
}
: >"$WORK/basic" ; : >"$WORK/renyi"
for i in $(seq 0 $((K - 1))); do # two at a time (never a bare wait: dpoptd is a child too)
	make_dataset basic "$i" >"$WORK/basic.$i" &
	P1=$!
	make_dataset renyi "$((i + K))" >"$WORK/renyi.$i" &
	wait "$P1" $! || true
done
for i in $(seq 0 $((K - 1))); do
	cat "$WORK/basic.$i" >>"$WORK/basic"
	cat "$WORK/renyi.$i" >>"$WORK/renyi"
done
[ "$(grep -c . "$WORK/basic")" = "$K" ] && [ "$(grep -c . "$WORK/renyi")" = "$K" ] ||
	{ echo "creating the datasets failed" >&2; exit 1; }
B1=$(head -n 1 "$WORK/basic")
B2=$(sed -n 2p "$WORK/basic")
R1=$(head -n 1 "$WORK/renyi")
for i in $(seq 30); do
	RUN=$(curl -sf -X POST "$U/v1/datasets/$B1/runs" -H "$H" -H 'Content-Type: application/json' \
		-d @"$WORK/run.json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
done
# Each kind of request once, so that a refusal shows its reason here.
for p in "/v1/datasets/$B2/runs" "/v1/datasets/$R1/runs"; do
	curl -sS --fail-with-body -X POST "$U$p" -H "$H" -H 'Content-Type: application/json' \
		-d @"$WORK/run.json" >"$WORK/check.out" || { cat "$WORK/check.out" >&2; exit 1; }
done
SPREAD_B="" SPREAD_R=""
while read -r d; do SPREAD_B="$SPREAD_B --path /v1/datasets/$d/runs"; done <"$WORK/basic"
while read -r d; do SPREAD_R="$SPREAD_R --path /v1/datasets/$d/runs"; done <"$WORK/renyi"
printf '%s\n' 'UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = 1;' >"$WORK/one.sql"
printf '%s\n' '\set aid random(1, 1000)' \
	'UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = :aid;' >"$WORK/spread.sql"

# wanted NAME: whether --only (when given) names the row
wanted() { [ -z "$ONLY" ] || case $ONLY in *",$1,"*) true ;; *) false ;; esac; }
# pgl_p99: the p99 latency (ms) of the transactions in pgbench's logs $WORK/pgl*
pgl_p99() {
	cat "$WORK"/pgl* | awk '{print $3 / 1000}' | sort -n |
		awk '{v[NR] = $1} END {i = int((NR - 1) * 0.99) + 1; print v[i]}'
}
# limit NAME PGBENCH-ARGS...: one pgbench run; appends "NAME limit rate p99" to results
limit() {
	name=$1; shift
	wanted "$name" || return 0
	rm -f "$WORK"/pgl*
	$PGB -n -c "$CONNS" -j 2 -T "$SECONDS_" -l --log-prefix="$WORK/pgl" "$@" pgb >"$WORK/pgb.out" 2>&1 ||
		{ cat "$WORK/pgb.out" >&2; exit 1; }
	tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$WORK/pgb.out" | tail -n 1)
	echo "$name limit $tps $(pgl_p99)" >>"$WORK/results"
}
# floor NAME KIND PGBENCH-ARGS...: one pgbench run on the floor's database;
# appends "NAME KIND rate p99" to results (KIND: floor_admit, floor_exec)
floor() {
	name=$1 kind=$2; shift 2
	wanted "$name" || return 0
	rm -f "$WORK"/pgl*
	$PGB -n -M prepared -c "$FCONNS" -j 2 -T "$SECONDS_" -l --log-prefix="$WORK/pgl" "$@" floor \
		>"$WORK/pgb.out" 2>&1 || { cat "$WORK/pgb.out" >&2; exit 1; }
	tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$WORK/pgb.out" | tail -n 1)
	p99=$(cat "$WORK"/pgl* | awk '{print $3 / 1000}' | sort -n |
		awk '{v[NR] = $1} END {i = int((NR - 1) * 0.99) + 1; print v[i]}')
	echo "$name $kind $tps $p99" >>"$WORK/results"
}
# dpopt NAME HTTP_LOAD-ARGS...
dpopt() {
	name=$1; shift
	wanted "$name" || return 0
	# shellcheck disable=SC2068
	out=$("$LOAD" --port "$PORT" --conns "$CONNS" --seconds "$SECONDS_" --header "$H" "$@") ||
		{ echo "$name: $out" >&2; exit 1; }
	echo "$name dpopt $(echo "$out" | sed 's/.*rate=\([0-9.]*\).*p99_ms=\([0-9.]*\).*/\1 \2/')" >>"$WORK/results"
}

# drain: wait until no run is queued or running (at most 10 minutes).
drain() {
	i=0
	until [ "$(psql "$DPOPT_DATABASE_URL" -Atc "SELECT count(*) FROM runs WHERE state IN ('queued', 'running')")" = 0 ]; do
		i=$((i + 1)); [ $i -lt 1200 ] || { echo "the queue did not drain" >&2; exit 1; }; sleep 0.5
	done
}

# capture NAME PATH: the statement GET PATH runs in PostgreSQL, from the
# server log (log_min_duration_statement = 0 for the one request), as a
# pgbench script $WORK/NAME.sql with its parameters as -D arguments in
# $WORK/NAME.args: the floor rows run what dpoptd runs, whatever it is.
capture() {
	psql "$PG_URL" -qc "ALTER SYSTEM SET log_min_duration_statement = 0" \
		-c "SELECT pg_reload_conf()" >/dev/null
	sleep 0.5
	off=$(wc -c <"$WORK/pg/pg.log")
	curl -sf "$U$2" -H "$H" >/dev/null
	sleep 0.2
	psql "$PG_URL" -qc "ALTER SYSTEM RESET log_min_duration_statement" \
		-c "SELECT pg_reload_conf()" >/dev/null
	tail -c +$((off + 1)) "$WORK/pg/pg.log" | python3 -c '
import re, sys
name = sys.argv[1]
lines = sys.stdin.read().splitlines()
for i, line in enumerate(lines):
    m = re.search(r"execute [^:]*: (SELECT k\.tenant_id.*)$", line)
    if m and i + 1 < len(lines) and "parameters:" in lines[i + 1]:
        sql = m.group(1)
        params = dict(re.findall(r"\$(\d+) = \x27([^\x27]*)\x27", lines[i + 1]))
        for k in sorted(params, key=int, reverse=True):
            sql = sql.replace("$" + k, ":p" + k)
        open(name + ".sql", "w").write(sql + "\n")
        open(name + ".args", "w").write(" ".join("-D p%s=%s" % kv for kv in params.items()) + "\n")
        sys.exit(0)
sys.exit("no keyed read found in the server log for " + name)
' "$WORK/$1"
}
# floor_sql NAME PARENT FILE: pgbench running $WORK/FILE.sql (capture) on
# the service's own database; its rate and p99 in NAME's dpoptd columns,
# PARENT's last limit (this repetition's pgbench -S) as its limit
floor_sql() {
	name=$1 parent=$2 file=$3
	wanted "$parent" || return 0
	rm -f "$WORK"/pgl*
	# shellcheck disable=SC2046
	$PGB -n -c "$CONNS" -j 2 -T "$SECONDS_" -l --log-prefix="$WORK/pgl" -M prepared \
		-f "$WORK/$file.sql" $(cat "$WORK/$file.args") readpath >"$WORK/pgb.out" 2>&1 ||
		{ cat "$WORK/pgb.out" >&2; exit 1; }
	tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$WORK/pgb.out" | tail -n 1)
	echo "$name dpopt $tps $(pgl_p99)" >>"$WORK/results"
	grep "^$parent limit " "$WORK/results" | tail -n 1 | sed "s/^$parent /$name /" >>"$WORK/results"
}
# floor_http NAME PARENT: GET /healthz through http_load, PARENT's last limit as its limit
floor_http() {
	name=$1 parent=$2
	wanted "$parent" || return 0
	out=$("$LOAD" --port "$PORT" --conns "$CONNS" --seconds "$SECONDS_" --path /healthz) ||
		{ echo "$name: $out" >&2; exit 1; }
	echo "$name dpopt $(echo "$out" | sed 's/.*rate=\([0-9.]*\).*p99_ms=\([0-9.]*\).*/\1 \2/')" >>"$WORK/results"
	grep "^$parent limit " "$WORK/results" | tail -n 1 | sed "s/^$parent /$name /" >>"$WORK/results"
}
if wanted runs_get; then capture runs_get "/v1/runs/$RUN"; fi
if wanted budget_get; then capture budget_get "/v1/datasets/$B1/budget"; fi
# Floors of the admission rows (issue 17): pgbench, -M prepared, on a copy
# of this database (the same tables, indexes, rules and triggers; no
# dpoptd attached), writing exactly the rows an admitted run writes, with
# the values of a run dpoptd admitted and executed above:
#   admit: one statement (its own transaction, one round trip, so the
#          row lock is held from the charge to the commit only): the
#          charge of the dataset row ('basic': the sums with their budget
#          check; 'renyi': the spent vector and spent epsilon), the run
#          row, its ledger entry, its audit row (ACCOUNTING: every charge
#          is audited);
#   exec:  the same, then what executing the run writes: the claim (its
#          own transaction: state, lease, attempts) and the result (state,
#          result, finish; fenced by the lease).
# No NOTIFY, no reads: what remains of an admission and a run once every
# read, planning, HTTP and round trip is gone.
drain
"$PGBIN/createdb" -h "$WORK/pg" -U dpopt floor
"$PGBIN/pg_dump" -h "$WORK/pg" -U dpopt readpath | psql -h "$WORK/pg" -U dpopt -q -o /dev/null floor
# floor_script DATASET-ID TEMPLATE-RUN-ID exec|admit: the script for one dataset
floor_script() {
	psql "$DPOPT_DATABASE_URL" -At -v ds="$1" -v run="$2" -v kind="$3" <<'SQL'
SELECT format($f$WITH c AS (UPDATE datasets SET %s WHERE id = %L%s RETURNING id), r AS (INSERT INTO runs (dataset_id, tenant_id, algorithm, request, plan, charge_epsilon, charge_delta, steps_total, request_hash, work, timeout_seconds, charge_rdp) SELECT %L, %L, %L, %L, %L, %s, %s, %s, decode(%L, 'hex'), %s, %s, %L FROM c RETURNING id), l AS (INSERT INTO ledger_entries (dataset_id, run_id, kind, epsilon, delta, event, rdp) SELECT %L, r.id, 'charge', %s, %s, %L, %L FROM r), a AS (INSERT INTO audit_log (tenant_id, actor_key_id, actor_role, via, action, dataset_id, run_id, key_id, request_id, client_address, detail) SELECT %L, %L, %L, %L, 'run.submit', %L, r.id, NULL, %L, %L, %L FROM r) SELECT id AS run FROM r \gset
%s$f$,
  CASE WHEN d.accounting_mode = 'basic'
       THEN format('spent_epsilon = spent_epsilon + %s, spent_delta = spent_delta + %s', r.charge_epsilon, r.charge_delta)
       ELSE 'spent_rdp = spent_rdp, spent_epsilon = spent_epsilon' END,
  d.id,
  CASE WHEN d.accounting_mode = 'basic'
       THEN format(' AND spent_epsilon + %s <= budget_epsilon AND spent_delta + %s <= budget_delta', r.charge_epsilon, r.charge_delta)
       ELSE '' END,
  d.id, r.tenant_id, r.algorithm, r.request::text, r.plan::text, r.charge_epsilon, r.charge_delta,
  r.steps_total, encode(r.request_hash, 'hex'), r.work, r.timeout_seconds, r.charge_rdp::text,
  d.id, r.charge_epsilon, r.charge_delta, l.event::text, l.rdp::text,
  a.tenant_id, a.actor_key_id, a.actor_role, a.via, d.id, a.request_id, a.client_address, a.detail::text,
  CASE WHEN :'kind' = 'exec' THEN format($e$UPDATE runs SET state = 'running', lease_owner = 'floor', lease_expires_at = now() + make_interval(secs => 30), attempts = attempts + 1, started_at = coalesce(started_at, now()), steps_done = 0 WHERE id = :run;
UPDATE runs SET state = 'succeeded', error_code = NULL, result = %L, steps_done = steps_total, finished_at = now(), lease_owner = NULL, lease_expires_at = NULL WHERE id = :run AND lease_owner = 'floor' AND state = 'running';
$e$, r.result::text) ELSE '' END)
FROM datasets d, runs r
JOIN ledger_entries l ON l.run_id = r.id AND l.kind = 'charge'
JOIN audit_log a ON a.run_id = r.id AND a.action = 'run.submit'
WHERE d.id = :'ds' AND r.id = :'run'
SQL
}
# a succeeded run of each mode: the template of the floor's rows
TB=$(psql "$DPOPT_DATABASE_URL" -Atc "SELECT r.id FROM runs r JOIN datasets d ON d.id = r.dataset_id
	WHERE d.accounting_mode = 'basic' AND r.state = 'succeeded' LIMIT 1")
TR=$(psql "$DPOPT_DATABASE_URL" -Atc "SELECT r.id FROM runs r JOIN datasets d ON d.id = r.dataset_id
	WHERE d.accounting_mode = 'renyi' AND r.state = 'succeeded' LIMIT 1")
[ -n "$TB" ] && [ -n "$TR" ] || { echo "no succeeded run to copy for the floors" >&2; exit 1; }
for kind in admit exec; do
	floor_script "$B2" "$TB" $kind >"$WORK/floor_${kind}_one_basic.sql"
	floor_script "$R1" "$TR" $kind >"$WORK/floor_${kind}_one_renyi.sql"
	FS_B="" FS_R="" i=0
	while read -r d; do
		floor_script "$d" "$TB" $kind >"$WORK/floor_${kind}_b$i.sql"
		FS_B="$FS_B -f $WORK/floor_${kind}_b$i.sql"; i=$((i + 1))
	done <"$WORK/basic"
	i=0
	while read -r d; do
		floor_script "$d" "$TR" $kind >"$WORK/floor_${kind}_r$i.sql"
		FS_R="$FS_R -f $WORK/floor_${kind}_r$i.sql"; i=$((i + 1))
	done <"$WORK/renyi"
	eval "FLOOR_${kind}_B=\$FS_B FLOOR_${kind}_R=\$FS_R"
done
[ -s "$WORK/floor_exec_one_basic.sql" ] && [ -s "$WORK/floor_exec_one_renyi.sql" ] ||
	{ echo "writing the floor scripts failed" >&2; exit 1; }

LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
: >"$WORK/results"
for rep in $(seq "$REPS"); do
	drain
	limit runs_get -S
	dpopt runs_get --path "/v1/runs/$RUN"
	floor_sql runs_get_sql runs_get runs_get
	floor_http http_static runs_get
	limit budget_get -S
	dpopt budget_get --path "/v1/datasets/$B1/budget"
	floor_sql budget_get_sql budget_get budget_get
	drain
	limit admit_one_basic -f "$WORK/one.sql"
	floor admit_one_basic floor_admit -f "$WORK/floor_admit_one_basic.sql"
	floor admit_one_basic floor_exec -f "$WORK/floor_exec_one_basic.sql"
	dpopt admit_one_basic --method POST --body "$WORK/run.json" --path "/v1/datasets/$B2/runs"
	drain
	limit admit_one_renyi -f "$WORK/one.sql"
	floor admit_one_renyi floor_admit -f "$WORK/floor_admit_one_renyi.sql"
	floor admit_one_renyi floor_exec -f "$WORK/floor_exec_one_renyi.sql"
	dpopt admit_one_renyi --method POST --body "$WORK/run.json" --path "/v1/datasets/$R1/runs"
	drain
	limit admit_spread_basic -f "$WORK/spread.sql"
	# shellcheck disable=SC2086
	floor admit_spread_basic floor_admit $FLOOR_admit_B
	# shellcheck disable=SC2086
	floor admit_spread_basic floor_exec $FLOOR_exec_B
	# shellcheck disable=SC2086
	dpopt admit_spread_basic --method POST --body "$WORK/run.json" $SPREAD_B
	drain
	limit admit_spread_renyi -f "$WORK/spread.sql"
	# shellcheck disable=SC2086
	floor admit_spread_renyi floor_admit $FLOOR_admit_R
	# shellcheck disable=SC2086
	floor admit_spread_renyi floor_exec $FLOOR_exec_R
	# shellcheck disable=SC2086
	dpopt admit_spread_renyi --method POST --body "$WORK/run.json" $SPREAD_R
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)

# Time to result: let the queue drain, then 40 runs one after the other.
drain
T0=$(psql "$DPOPT_DATABASE_URL" -Atc "SELECT now()")
for i in $(seq 40); do
	curl -sf -X POST "$U/v1/datasets/$(sed -n 2p "$WORK/basic")/runs" -H "$H" \
		-H 'Content-Type: application/json' -d @"$WORK/run.json" >/dev/null
	sleep 0.05
done
sleep 1
psql "$DPOPT_DATABASE_URL" -Atc "SELECT 'ttr ' || count(*) || ' ' || count(*) FILTER (WHERE state = 'succeeded')
	|| ' ' || coalesce(extract(epoch FROM percentile_cont(0.5) WITHIN GROUP (ORDER BY finished_at - created_at)) * 1000, -1)
	|| ' ' || coalesce(extract(epoch FROM percentile_cont(0.99) WITHIN GROUP (ORDER BY finished_at - created_at)) * 1000, -1)
	|| ' ' || coalesce(extract(epoch FROM max(finished_at - created_at)) * 1000, -1)
	FROM runs WHERE created_at > '$T0'" >>"$WORK/results"

python3 - "$WORK/results" "$CONNS" "$SECONDS_" "$REPS" "$LOAD0" "$LOAD1" "$FCONNS" <<'PY'
import statistics, sys
path, conns, secs, reps, l0, l1, fconns = sys.argv[1:]
rows, order, ttr = {}, [], None
for line in open(path):
    f = line.split()
    if f[0] == "ttr":
        ttr = f[1:]
        continue
    if f[0] not in rows:
        rows[f[0]] = {"limit": [], "dpopt": [], "floor_admit": [], "floor_exec": []}
        order.append(f[0])
    rows[f[0]][f[1]].append((float(f[2]), float(f[3])))
print("read path and admissions: %s connections, %s s per run, %s repetitions, interleaved "
      "(limit, then dpoptd); load average before %s, after %s" % (conns, secs, reps, l0, l1))
def mr(v):
    return "%.4g (%.4g-%.4g)" % (statistics.median(v), min(v), max(v))
bad = False
if "runs_get_sql" in rows or "budget_get_sql" in rows or "http_static" in rows:
    print("floors (in the dpoptd columns): *_sql = pgbench -M prepared running that GET's own "
          "statement; http_static = GET /healthz through http_load (no key, no database)")
print("%-19s %-28s %-24s %-28s %-22s %s" % ("row", "dpoptd req/s", "dpoptd p99 ms",
      "limit per s", "limit p99 ms", "ratio (rate), p99 ratio"))
for name in order:
    d, l = rows[name]["dpopt"], rows[name]["limit"]
    if not d or len(d) != len(l) or any(x != x for p in d + l for x in p):
        bad = True
        continue
    ratio = [a[0] / b[0] for a, b in zip(d, l)]
    pr = [a[1] / b[1] if b[1] > 0 else float("inf") for a, b in zip(d, l)]
    print("%-19s %-28s %-24s %-28s %-22s %s, %s" % (name, mr([x[0] for x in d]), mr([x[1] for x in d]),
          mr([x[0] for x in l]), mr([x[1] for x in l]), mr(ratio), mr(pr)))
# The floors (admission rows): their rate and p99, the floor against the
# UPDATE limit, and dpoptd against the floor, each per repetition.
floors = [n for n in order if rows[n]["floor_admit"] or rows[n]["floor_exec"]]
if floors:
    print("floors (pgbench -M prepared, %s clients: the rows an admission writes; 'exec': and a tiny "
          "run's claim and result)" % fconns)
    print("%-31s %-28s %-24s %-28s %s" % ("row", "floor per s", "floor p99 ms", "floor / limit",
          "dpoptd / floor"))
for name in floors:
    d, l = rows[name]["dpopt"], rows[name]["limit"]
    for kind in ("floor_admit", "floor_exec"):
        f = rows[name][kind]
        if not f or len(f) != len(l) or len(f) != len(d) or any(x != x for p in f for x in p):
            bad = True
            continue
        print("%-31s %-28s %-24s %-28s %s" % (name + " " + kind[6:], mr([x[0] for x in f]),
              mr([x[1] for x in f]), mr([a[0] / b[0] for a, b in zip(f, l)]),
              mr([a[0] / b[0] for a, b in zip(d, f)])))
if ttr is None or float(ttr[2]) < 0:
    bad = True
else:
    print("time to result (created_at to finished_at), %s tiny runs one after the other, %s succeeded: "
          "p50 %.1f ms, p99 %.1f ms, max %.1f ms" % (ttr[0], ttr[1], float(ttr[2]), float(ttr[3]), float(ttr[4])))
sys.exit(1 if bad else 0)
PY
