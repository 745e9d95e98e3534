#!/bin/sh
# estimate_latency.sh - latency of POST /v1/datasets/{id}/runs:estimate
# for a long subsampled run (issue 16: "the estimate endpoint stays <= 50
# ms p99 for such a run"), on a basic dataset (the PLD calibrates) and a
# renyi one (the RDP filter calibrates, the PLD is reported beside it).
#
#   bench/estimate_latency.sh [--seconds S] [--reps R] [--conns C]
#                             [--steps T] [--smoke]
#                             [--build DIR | --dpoptd PATH --http-load PATH]
#
# Starts a private PostgreSQL (scripts/lib/pg.sh) and a release dpoptd on
# a free port, creates one basic and one renyi dataset of 10,000 rows and
# asks, R times in turn for S seconds each with C connections (closed
# loop, bench/http_load), for the estimate of dp_sgd.subsampled with
# batch 100 (q = 0.01) and T steps (default 10,000) at (1, 1e-5): the
# accountant calibrates z over T composed subsampled Gaussians on every
# request (nothing is cached between requests).  Prints per mode and
# repetition the rate, p50 and p99 (ms), the calibrated noise multiplier
# and the accountant named by the plan, the CPU seconds dpoptd spent per
# request (from /proc, so other load does not inflate it), and the load
# average before and after.  --smoke: S = 1, R = 1, C = 1, T = 1000 (CI:
# it runs and every figure is a number).  Defaults: S = 5, R = 3, C = 1.
set -eu
cd "$(dirname "$0")/.."
ROOT=$(pwd)
. scripts/lib/pg.sh
. bench/lib.sh

SECONDS_=5 REPS=3 CONNS=1 STEPS=10000 BUILD="" BIN="" LOAD=""
while [ $# -gt 0 ]; do
	case $1 in
	--seconds) SECONDS_=$2; shift 2 ;;
	--reps) REPS=$2; shift 2 ;;
	--conns) CONNS=$2; shift 2 ;;
	--steps) STEPS=$2; shift 2 ;;
	--smoke) SECONDS_=1; REPS=1; CONNS=1; STEPS=1000; shift ;;
	--build) BUILD=$2; shift 2 ;;
	--dpoptd) BIN=$2; shift 2 ;;
	--http-load) LOAD=$2; shift 2 ;;
	*) echo "usage: $0 [--seconds S] [--reps R] [--conns C] [--steps T] [--smoke]" \
		"[--build DIR | --dpoptd PATH --http-load PATH]" >&2; exit 2 ;;
	esac
done
bench_programs service/dpoptd bench/http_load

bench_workdir estimate
export DPOPT_RATE_LIMIT_PER_SECOND=0
bench_start estimate
bench_rows_csv 10000 5 2
cat >"$WORK/run.json" <<JSON
{"algorithm": "dp_sgd.subsampled", "objective": {"name": "logistic"},
 "constraints": {"x": {"kind": "l2_ball", "radius": 1}},
 "params": {"batch_size": 100, "steps": $STEPS},
 "privacy": {"epsilon": 1.0, "delta": 1e-5}}
JSON
make_dataset() { # make_dataset MODE ROWS-INDEX -> id
	ds=$(curl -sf -X POST "$U/v1/datasets" -H "$H" -H 'Content-Type: application/json' \
		--data "{\"name\": \"est\", \"schema\": {\"features\": 5, \"task\": \"binary\"},
		  \"bounds\": {\"feature_l2\": 1}, \"budget\": {\"epsilon\": 10, \"delta\": 1e-5},
		  \"accounting_mode\": \"$1\"}" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
	curl -sS --fail-with-body -X PUT "$U/v1/datasets/$ds/data" -H "$H" -H 'Content-Type: text/csv' \
		--data-binary @"$WORK/rows$2.csv" >"$WORK/put.out" || { cat "$WORK/put.out" >&2; return 1; }
	echo "$ds"
}
DB=$(make_dataset basic 0)
DR=$(make_dataset renyi 1)

echo "estimate latency: dp_sgd.subsampled, n = 10000, batch 100, $STEPS steps, (1, 1e-5);" \
	"$CONNS connection(s), $SECONDS_ s x $REPS"
for ds in "$DB" "$DR"; do # each once: a refusal shows its reason here; the plan's figures
	curl -sS --fail-with-body -X POST "$U/v1/datasets/$ds/runs:estimate" -H "$H" \
		-H 'Content-Type: application/json' -d @"$WORK/run.json" >"$WORK/est.out" ||
		{ cat "$WORK/est.out" >&2; exit 1; }
	python3 - "$WORK/est.out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
def find(o, key):
    if isinstance(o, dict):
        if key in o:
            return o[key]
        for v in o.values():
            r = find(v, key)
            if r is not None:
                return r
    if isinstance(o, list):
        for v in o:
            r = find(v, key)
            if r is not None:
                return r
    return None
z, acc = find(d, "noise_multiplier"), find(d, "accountant")
if not isinstance(z, (int, float)) or not isinstance(acc, str):
    sys.exit("the estimate has no noise multiplier or accountant")
print("  plan: noise_multiplier %.6g, accountant %s" % (z, acc))
PY
done
cpu() { awk '{print $14 + $15}' "/proc/$PID/stat"; }
TICK=$(getconf CLK_TCK)
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for rep in $(seq "$REPS"); do
	for mode in basic renyi; do
		[ $mode = basic ] && ds=$DB || ds=$DR
		c0=$(cpu)
		out=$("$LOAD" --port "$PORT" --conns "$CONNS" --seconds "$SECONDS_" --header "$H" \
			--method POST --body "$WORK/run.json" --path "/v1/datasets/$ds/runs:estimate") ||
			{ echo "$mode: $out" >&2; exit 1; }
		c1=$(cpu)
		n=$(echo "$out" | sed 's/.*requests=\([0-9]*\).*/\1/')
		echo "$out" | awk -v m=$mode -v r="$rep" -v n="$n" -v c=$((c1 - c0)) -v t="$TICK" '{
			split($0, f, /[ =]/);
			for (i = 1; i < length(f); i++) v[f[i]] = f[i + 1];
			printf "  rep %s %-5s rate %7.1f/s  p50 %7.2f ms  p99 %7.2f ms  dpoptd CPU %6.2f ms/request\n",
				r, m, v["rate"], v["p50_ms"], v["p99_ms"], 1000 * c / t / n }'
	done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
