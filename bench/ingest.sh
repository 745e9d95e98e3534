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
# before and after.  Then the CPU seconds (from /proc, so that a busy
# machine skews them less than the walls) of the upload's HTTP thread
# (parse, clip, pack), of its writer (hash, send) and of PostgreSQL, and
# of PostgreSQL and psql during the COPY; the store alone (a binary COPY of the
# first upload's packed chunks into a table like dataset_chunks, R times);
# and from these the floor on two idle cores, max(HTTP thread, writer and
# hasher, PostgreSQL, all / 2), as the best upload / COPY ratio this much
# work can reach, and COPY's own, max(PostgreSQL, psql, all / 2): their
# quotient is the ratio an idle machine would show.  The writer and hasher threads end with the upload, so
# their CPU is dpoptd's minus that of its lasting threads.  Defaults: 200000 rows, 100 features, csv, 3 reps.
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
# cpusnap: "dpoptd_ticks busiest_persistent_tid_ticks... pg_ticks" as JSON:
# dpoptd's CPU per thread (utime + stime) and the whole cluster's (the
# postmaster with its reaped children, and its live children), in ticks.
cpusnap() {
	python3 - "$PID" "$(head -1 "$WORK/pg/data/postmaster.pid")" <<'PY'
import json, os, sys
def st(path):
    f = open(path).read().rsplit(")", 1)[1].split()
    return int(f[1]), [int(x) for x in f[11:15]]  # ppid, utime stime cutime cstime
pid, pm = sys.argv[1], int(sys.argv[2])
tasks = {}
for t in os.listdir("/proc/%s/task" % pid):
    try:
        tasks[t] = sum(st("/proc/%s/task/%s/stat" % (pid, t))[1][:2])
    except OSError:
        pass
proc = sum(st("/proc/%s/stat" % pid)[1][:2])
pg = sum(st("/proc/%d/stat" % pm)[1])
for p in os.listdir("/proc"):
    if p.isdigit():
        try:
            pp, c = st("/proc/%s/stat" % p)
        except (OSError, IndexError):
            continue
        if pp == pm:
            pg += c[0] + c[1]
print(json.dumps({"proc": proc, "tasks": tasks, "pg": pg}))
PY
}
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
	cpusnap >"$WORK/cpu_u0_$1"
	T=$(curl -s -o "$WORK/reply" -w '%{time_total}' -X PUT "http://$DPOPT_LISTEN/v1/datasets/$DS/data" \
		-H "$H" -H "Content-Type: $CT" --data-binary @"$DATA")
	cpusnap >"$WORK/cpu_u1_$1"
	[ -z "$PP" ] || { kill -INT "$PP"; wait "$PP" || true; }
	jq -e '.state == "sealed"' "$WORK/reply" >/dev/null || { cat "$WORK/reply" >&2; exit 1; }
	echo "$T $(awk '/VmHWM/ {print $2}' "/proc/$PID/status")"
}
copy() { # copy REP: prints seconds
	psql "$DPOPT_DATABASE_URL" -qc "CREATE TABLE copy$1 ($COLDEFS)" >/dev/null
	cpusnap >"$WORK/cpu_c0_$1"
	t0=$(now)
	echo "0 0" >"$WORK/psql_cpu_$1" # without /usr/bin/time: psql's CPU unknown, 0
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f "%U %S" -o "$WORK/psql_cpu_$1" \
			psql "$DPOPT_DATABASE_URL" -qc "\\copy copy$1 FROM '$DATA' WITH $COPYOPT" >/dev/null
	else
		psql "$DPOPT_DATABASE_URL" -qc "\\copy copy$1 FROM '$DATA' WITH $COPYOPT" >/dev/null
	fi
	t1=$(now)
	sleep 0.3 # the backend's exit reaped: its CPU is the postmaster's
	cpusnap >"$WORK/cpu_c1_$1"
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
# The store alone: PostgreSQL writing the first upload's packed chunks
# (the same bytes, no parse, no hash) by binary COPY into a table shaped
# like dataset_chunks (its key, STORAGE EXTERNAL), R times.
psql "$DPOPT_DATABASE_URL" -qc "\\copy (SELECT * FROM dataset_chunks WHERE dataset_id = '$FIRST' ORDER BY chunk_no) TO '$WORK/chunks.bin' WITH (FORMAT binary)" >/dev/null
: >"$WORK/store"
r=1
while [ "$r" -le "$REPS" ]; do
	psql "$DPOPT_DATABASE_URL" -qc "CREATE TABLE store$r (LIKE dataset_chunks INCLUDING ALL)" >/dev/null
	cpusnap >"$WORK/cpu_s0_$r"
	t0=$(now)
	psql "$DPOPT_DATABASE_URL" -qc "\\copy store$r FROM '$WORK/chunks.bin' WITH (FORMAT binary)" >/dev/null
	t1=$(now)
	sleep 0.3
	cpusnap >"$WORK/cpu_s1_$r"
	psql "$DPOPT_DATABASE_URL" -qc "DROP TABLE store$r" >/dev/null
	echo "$r $t0 $t1" >>"$WORK/store"
	r=$((r + 1))
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
STORED=$(psql "$DPOPT_DATABASE_URL" -qAtc "SELECT pg_total_relation_size('dataset_chunks')")
python3 - "$ROWS" "$COLS" "$FORMAT" "$BYTES" "$STORED" "$REPS" "$LOAD0" "$LOAD1" "$WORK/reps" "$WORK" "$(getconf CLK_TCK)" <<'PY'
import json, statistics, sys
n, d, fmt, b, st, reps, l0, l1, path, work, hz = sys.argv[1:]
hz = float(hz)
def snap(name):
    return json.load(open("%s/cpu_%s" % (work, name)))
def cpu(kind, r):
    # (dpoptd's busiest lasting thread, the rest of dpoptd, PostgreSQL) in s
    a, z = snap("%s0_%s" % (kind, r)), snap("%s1_%s" % (kind, r))
    lasting = [z["tasks"][t] - a["tasks"][t] for t in a["tasks"] if t in z["tasks"]]
    http = max(lasting) if lasting else 0
    return http / hz, (z["proc"] - a["proc"] - http) / hz, (z["pg"] - a["pg"]) / hz
def med(xs):
    return "%.2f (%.2f-%.2f)" % (statistics.median(xs), min(xs), max(xs))
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
# CPU seconds: load-independent where the walls are not.
P, W, G, C, Q, S, SW = [], [], [], [], [], [], []
for r, tu, hwm, tc in rows:
    p, w, g = cpu("u", r)
    P.append(p); W.append(w); G.append(g)
    C.append(cpu("c", r)[2])
    Q.append(sum(float(x) for x in open("%s/psql_cpu_%s" % (work, r)).read().split()[-2:]))
for l in open(work + "/store"):
    r, t0, t1 = l.split()
    S.append(cpu("s", r)[2]); SW.append(float(t1) - float(t0))
print("  CPU s, upload: HTTP thread (parse, clip, pack) %s | writer and hasher (send, hash) %s | PostgreSQL %s"
      % (med(P), med(W), med(G)))
print("  CPU s, COPY: PostgreSQL %s | psql (reads and sends the file) %s" % (med(C), med(Q)))
print("  store alone (binary COPY of the same packed chunks, no parse): %s s wall, PostgreSQL %s CPU s"
      % (med(SW), med(S)))
p, w, g, c, s_ = (statistics.median(x) for x in (P, W, G, C, S))
floor = max(p, w, g, (p + w + g) / 2, 1 / hz)  # at least a tick: small runs
print("  upload's floor on 2 idle cores: max(HTTP %.2f, writer + hasher %.2f, PostgreSQL %.2f, all / 2 %.2f) = %.2f s"
      % (p, w, g, (p + w + g) / 2, floor))
q = statistics.median(Q)
cfloor = max(c, q, (c + q) / 2, 1 / hz)
print("  COPY's floor on 2 idle cores: max(PostgreSQL %.2f, psql %.2f, all / 2 %.2f) = %.2f s;"
      " COPY floor / upload floor = %.2f (the ratio on an idle machine; goal 2)"
      % (c, q, (c + q) / 2, cfloor, cfloor / floor))
bal = max(p, w, g) / max((p + w + g) / 2, 1 / hz)
print("  balance: max(HTTP, writer + hasher, PostgreSQL) / (all / 2) = %.2f (%s)"
      % (bal, "<= 1.00: the two cores, not one thread, set the pace" if bal <= 1.0
         else "> 1.00: one thread sets the pace"))
ins = g / s_ if s_ > 0 else float("nan")
print("  PostgreSQL CPU, INSERT of the chunks (upload) / binary COPY of them (store alone) = %.2f%s"
      % (ins, " (below 1: INSERT is the cheaper store)" if ins < 1 else
         " (1 or above: binary COPY would be the cheaper store)" if ins >= 1 else ""))
alone = g / cfloor
print("  PostgreSQL alone: upload's PostgreSQL CPU / COPY's floor = %.2f (%s)"
      % (alone, "above 0.50: 2x COPY is out of reach with these stored bytes, whatever dpoptd's own CPU"
         if alone > 0.5 else "at most 0.50: the store alone leaves room for 2x COPY"))
PY
if [ -n "$PERF" ]; then
	echo "  profile of the last upload (dpoptd and its backends; by thread, then symbol):"
	perf report -i "$PERF" --no-children --sort pid --stdio 2>/dev/null | grep -E '^ +[0-9.]+%'
	perf report -i "$PERF" --no-children --sort pid,sym --stdio -g none 2>/dev/null |
		grep -E '^ +[0-9.]+%' | head -40
fi
