#!/bin/sh
# ingest.sh - end-to-end upload throughput into PostgreSQL, and peak memory.
#
#   bench/ingest.sh [--rows N] [--cols D] [--format csv|libsvm] [--nnz K]
#
# Starts a private PostgreSQL (scripts/lib/pg.sh) and a release dpoptd on a
# free port, generates N rows of D features (libsvm: K non-zeros per row),
# uploads them with curl (PUT /v1/datasets/{id}/data, streamed) and prints
# MB/s and rows/s of the whole upload (parse, clip, hash, pack, INSERT,
# seal, COMMIT), dpoptd's peak resident memory (VmHWM) before and after,
# and the size of the stored rows.  Defaults: 200000 rows, 100 features.
set -eu
cd "$(dirname "$0")/.."
ROOT=$(pwd)
. scripts/lib/pg.sh

ROWS=200000 COLS=100 FORMAT=csv NNZ=50
while [ $# -gt 0 ]; do
	case $1 in
	--rows) ROWS=$2; shift 2 ;;
	--cols) COLS=$2; shift 2 ;;
	--format) FORMAT=$2; shift 2 ;;
	--nnz) NNZ=$2; shift 2 ;;
	*) echo "usage: $0 [--rows N] [--cols D] [--format csv|libsvm] [--nnz K]" >&2; exit 2 ;;
	esac
done
[ -d build/release ] || meson setup build/release -Dbuildtype=release -Dtests=disabled >/dev/null
ninja -C build/release >/dev/null
BIN=$ROOT/build/release/service/dpoptd

WORK=$(mktemp -d /tmp/dpopt-ingest.XXXXXX)
[ "$(id -u)" = 0 ] && chmod 755 "$WORK"
PID=""
cleanup() {
	[ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
	pg_cluster_stop "$WORK/pg" >/dev/null 2>&1 || true
	rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

echo "generating $ROWS x $COLS ($FORMAT)..." >&2
python3 - "$ROWS" "$COLS" "$FORMAT" "$NNZ" >"$WORK/data" <<'PY'
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
BYTES=$(stat -c %s "$WORK/data")

pg_cluster_start "$WORK/pg" >/dev/null
psql "$PG_URL" -qc "CREATE DATABASE ingest" >/dev/null
export DPOPT_DATABASE_URL="host=$WORK/pg user=dpopt dbname=ingest"
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export DPOPT_LISTEN="127.0.0.1:$PORT" DPOPT_MAX_UPLOAD_BYTES=$((BYTES + 1024)) DPOPT_LOG_LEVEL=warn
"$BIN" >"$WORK/dpoptd.log" 2>&1 &
PID=$!
i=0
until curl -sf "http://$DPOPT_LISTEN/readyz" >/dev/null; do
	i=$((i + 1)); [ $i -lt 200 ] || { cat "$WORK/dpoptd.log" >&2; exit 1; }; sleep 0.05
done
KEY=$("$BIN" keys create --tenant bench --role owner 2>/dev/null)
H="Authorization: Bearer $KEY"
if [ "$FORMAT" = csv ]; then CT=text/csv; else CT=text/x-libsvm; fi
DS=$(curl -sf -X POST "http://$DPOPT_LISTEN/v1/datasets" -H "$H" -H 'Content-Type: application/json' \
	--data "{\"name\": \"ingest\", \"schema\": {\"features\": $COLS, \"task\": \"binary\"},
	  \"bounds\": {\"feature_l2\": 1}, \"budget\": {\"epsilon\": 1, \"delta\": 1e-9}}" | jq -r .id)
HWM0=$(awk '/VmHWM/ {print $2}' "/proc/$PID/status")
T=$(curl -s -o "$WORK/reply" -w '%{time_total}' -X PUT "http://$DPOPT_LISTEN/v1/datasets/$DS/data" \
	-H "$H" -H "Content-Type: $CT" --data-binary @"$WORK/data")
HWM1=$(awk '/VmHWM/ {print $2}' "/proc/$PID/status")
jq -e '.state == "sealed"' "$WORK/reply" >/dev/null || { cat "$WORK/reply" >&2; exit 1; }
STORED=$(psql "$DPOPT_DATABASE_URL" -qAtc "SELECT pg_total_relation_size('dataset_chunks')")
python3 - "$ROWS" "$COLS" "$FORMAT" "$BYTES" "$T" "$HWM0" "$HWM1" "$STORED" <<'PY'
import sys
n, d, fmt, b, t, h0, h1, st = sys.argv[1:]
n, b, t, st = int(n), int(b), float(t), int(st)
print("ingest %s: %d rows x %s features, body %.1f MB" % (fmt, n, d, b / 1e6))
print("  upload end to end: %.2f s  %.1f MB/s  %.0f rows/s" % (t, b / 1e6 / t, n / t))
print("  dpoptd peak RSS (VmHWM): %.1f MB before, %.1f MB after" % (int(h0) / 1e3, int(h1) / 1e3))
print("  stored rows (dataset_chunks with TOAST): %.1f MB" % (st / 1e6))
PY
