#!/bin/sh
# ingest.sh - end-to-end upload throughput into PostgreSQL as a ratio
# against COPY of the same bytes on the same cluster, and peak memory.
#
#   bench/ingest.sh [--rows N] [--cols D] [--format csv|libsvm] [--nnz K]
#                   [--reps R] [--dpoptd PATH] [--data FILE] [--perf FILE]
#
# Starts a private PostgreSQL (scripts/lib/pg.sh) and a release dpoptd on a
# free port, generates N rows of D features (libsvm: K non-zeros per row)
# and then, R times (default 3), in alternating order:
#   - uploads the file with curl (PUT /v1/datasets/{id}/data, streamed):
#     parse, clip, hash, pack, INSERT, seal, COMMIT, each rep a fresh
#     dataset sharing the first one's ledger (the same rows again would
#     otherwise be refused as budget laundering);
#   - COPYs the same file through psql's \copy into a fresh table: CSV into
#     D + 1 float8 columns (PostgreSQL parses every number), LIBSVM into
#     one text column (one value a line, the text stored as is).
# Prints each rep, then the ratio upload MB/s / COPY MB/s as median and
# range, dpoptd's peak resident memory (VmHWM, reset before each upload
# through /proc/PID/clear_refs), the stored size and the load average
# before and after.  Defaults: 200000 rows, 100 features, csv, 3 reps.
# --dpoptd runs another build (e.g. a baseline) against the same setup;
# --data keeps the generated body in FILE and reuses it when it exists
# (the generator is seeded: the same options give the same bytes); --perf
# records the CPU profile of dpoptd and of its PostgreSQL backends (perf
# record -g -p) during the last upload into FILE and prints its top symbols.
set -eu
cd "$(dirname "$0")/.."
ROOT=$(pwd)
. scripts/lib/pg.sh
. bench/lib.sh

ROWS=200000 COLS=100 FORMAT=csv NNZ=50 REPS=3 BIN="" DATA="" PERF=""
while [ $# -gt 0 ]; do
	case $1 in
	--rows) ROWS=$2; shift 2 ;;
	--cols) COLS=$2; shift 2 ;;
	--format) FORMAT=$2; shift 2 ;;
	--nnz) NNZ=$2; shift 2 ;;
	--reps) REPS=$2; shift 2 ;;
	--dpoptd) BIN=$2; shift 2 ;;
	--data) DATA=$2; shift 2 ;;
	--perf) PERF=$2; shift 2 ;;
	*) echo "usage: $0 [--rows N] [--cols D] [--format csv|libsvm] [--nnz K] [--reps R] [--dpoptd PATH] [--data FILE] [--perf FILE]" >&2; exit 2 ;;
	esac
done
LOAD=none # no HTTP load generator here
bench_programs
bench_workdir ingest

[ -n "$DATA" ] || DATA=$WORK/data
[ -s "$DATA" ] || echo "generating $ROWS x $COLS ($FORMAT)..." >&2
[ -s "$DATA" ] || python3 - "$ROWS" "$COLS" "$FORMAT" "$NNZ" >"$DATA" <<'PY'
import random, sys
n, d, fmt, k = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
rng = random.Random(1)
out = sys.stdout
s = 0.999 / d ** 0.5 if fmt == "csv" else 0.999 / min(k, d) ** 0.5
buf = []
for i in range(n):
    y = "1" if rng.random() < 0.5 else "-1"
    if fmt == "csv":
        buf.append(",".join("%.6f" % (s * (2 * rng.random() - 1)) for _ in range(d)) + "," + y)
    else:
        cols = sorted(rng.sample(range(1, d + 1), min(k, d)))
        buf.append(y + " " + " ".join("%d:%.6f" % (c, s * (2 * rng.random() - 1)) for c in cols))
    if len(buf) == 10000:
        out.write("\n".join(buf) + "\n"); buf = []
if buf:
    out.write("\n".join(buf) + "\n")
PY
BYTES=$(stat -c %s "$DATA")

export DPOPT_MAX_UPLOAD_BYTES=$((BYTES + 1024))
bench_start ingest
if [ "$FORMAT" = csv ]; then
	CT=text/csv
	COLDEFS=$(python3 -c "import sys; print(', '.join('c%d float8' % j for j in range(int(sys.argv[1]) + 1)))" "$COLS")
	COPYOPT="(FORMAT csv)"
else
	CT=text/x-libsvm COLDEFS="line text" COPYOPT="(FORMAT text)"
fi
now() { date +%s.%N; }
FIRST=""
upload() { # upload REP: prints seconds and peak RSS (kB); sets DS
	if [ -z "$FIRST" ]; then LEDGER="\"budget\": {\"epsilon\": 1, \"delta\": 1e-9}"
	else LEDGER="\"share_budget_with\": \"$FIRST\""; fi
	DS=$(curl -sf -X POST "http://$DPOPT_LISTEN/v1/datasets" -H "$H" -H 'Content-Type: application/json' \
		--data "{\"name\": \"ingest$1\", \"schema\": {\"features\": $COLS, \"task\": \"binary\"},
		  \"bounds\": {\"feature_l2\": 1}, $LEDGER}" | jq -r .id)
	echo 5 >"/proc/$PID/clear_refs" 2>/dev/null || true
	PP=""
	if [ -n "$PERF" ] && [ "$1" = "$REPS" ]; then
		BACKENDS=$(psql "$DPOPT_DATABASE_URL" -qAtc "SELECT string_agg(pid::text, ',')
			FROM pg_stat_activity WHERE datname = 'ingest' AND pid <> pg_backend_pid()")
		perf record -q -g -F 499 -p "$PID${BACKENDS:+,$BACKENDS}" -o "$PERF" >/dev/null 2>&1 &
		PP=$!
		sleep 1
	fi
	T=$(curl -s -o "$WORK/reply" -w '%{time_total}' -X PUT "http://$DPOPT_LISTEN/v1/datasets/$DS/data" \
		-H "$H" -H "Content-Type: $CT" --data-binary @"$DATA")
	[ -z "$PP" ] || { kill -INT "$PP"; wait "$PP" || true; }
	jq -e '.state == "sealed"' "$WORK/reply" >/dev/null || { cat "$WORK/reply" >&2; exit 1; }
	echo "$T $(awk '/VmHWM/ {print $2}' "/proc/$PID/status")"
}
copy() { # copy REP: prints seconds
	psql "$DPOPT_DATABASE_URL" -qc "CREATE TABLE copy$1 ($COLDEFS)" >/dev/null
	t0=$(now)
	psql "$DPOPT_DATABASE_URL" -qc "\\copy copy$1 FROM '$DATA' WITH $COPYOPT" >/dev/null
	t1=$(now)
	psql "$DPOPT_DATABASE_URL" -qc "DROP TABLE copy$1" >/dev/null
	python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$t0" "$t1"
}
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
: >"$WORK/reps"
r=1
while [ "$r" -le "$REPS" ]; do
	if [ $((r % 2)) = 1 ]; then upload "$r" >"$WORK/u"; C=$(copy "$r")
	else C=$(copy "$r"); upload "$r" >"$WORK/u"; fi
	U=$(cat "$WORK/u")
	[ -n "$FIRST" ] || FIRST=$DS
	echo "$r $U $C" >>"$WORK/reps"
	r=$((r + 1))
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
STORED=$(psql "$DPOPT_DATABASE_URL" -qAtc "SELECT pg_total_relation_size('dataset_chunks')")
python3 - "$ROWS" "$COLS" "$FORMAT" "$BYTES" "$STORED" "$REPS" "$LOAD0" "$LOAD1" "$WORK/reps" <<'PY'
import statistics, sys
n, d, fmt, b, st, reps, l0, l1, path = sys.argv[1:]
n, b, st, reps = int(n), int(b), int(st), int(reps)
rows = [l.split() for l in open(path)]
print("ingest %s: %d rows x %s features, body %.1f MB, %d reps (alternating order)" % (fmt, n, d, b / 1e6, reps))
print("  load average before: %s; after: %s" % (l0, l1))
ratios = []
for r, tu, hwm, tc in rows:
    tu, tc = float(tu), float(tc)
    ratios.append(tc / tu)
    print("  rep %s: upload %.2f s %.1f MB/s (%.0f rows/s, peak RSS %.1f MB) | COPY %.2f s %.1f MB/s | ratio %.2f"
          % (r, tu, b / 1e6 / tu, n / tu, int(hwm) / 1e3, tc, b / 1e6 / tc, tc / tu))
print("  upload / COPY of the same bytes: median %.2f (range %.2f-%.2f)" % (statistics.median(ratios), min(ratios), max(ratios)))
print("  stored rows (dataset_chunks with TOAST, all reps): %.1f MB" % (st / 1e6))
PY
if [ -n "$PERF" ]; then
	echo "  profile of the last upload (dpoptd and its backends; by thread, then symbol):"
	perf report -i "$PERF" --no-children --sort pid --stdio 2>/dev/null | grep -E '^ +[0-9.]+%'
	perf report -i "$PERF" --no-children --sort pid,sym --stdio -g none 2>/dev/null |
		grep -E '^ +[0-9.]+%' | head -40
fi
