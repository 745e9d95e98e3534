# bench/lib.sh - what the service benchmarks share (read_path.sh, ingest.sh,
# estimate_latency.sh).  Source it from the repository root after
# scripts/lib/pg.sh (it sources scripts/lib/service.sh for the readiness
# wait).
#
#   bench_programs PROGRAMS...   build/release (set up once) when BIN is
#                                unset, its PROGRAMS built; sets BIN to its
#                                dpoptd and, when LOAD is unset, LOAD to its
#                                bench/http_load; BUILD names another build
#   bench_workdir NAME           WORK, a fresh /tmp/dpopt-NAME.XXXXXX, and a
#                                trap that stops dpoptd ($PID), the cluster
#                                and removes WORK on exit
#   bench_start DBNAME           a private PostgreSQL in $WORK/pg, database
#                                DBNAME, dpoptd on a free port (extra
#                                settings: export them before); sets PORT,
#                                U, PID, KEY (an owner key) and H (its
#                                Authorization header)
#   bench_rows_csv N D K         K files $WORK/rows0.csv ... of N random
#                                rows of D features in [-0.4, 0.4] and a
#                                label +-1 (file j seeded with j)

. scripts/lib/service.sh

bench_programs() {
	if [ -z "${BIN:-}" ] || [ -z "${LOAD:-}" ]; then
		if [ -z "${BUILD:-}" ]; then
			BUILD=build/release
			[ -d $BUILD ] || meson setup $BUILD -Dbuildtype=release -Dtests=disabled >/dev/null
			ninja -C $BUILD "$@" >/dev/null
		fi
		[ -n "${BIN:-}" ] || BIN=$ROOT/$BUILD/service/dpoptd
		[ -n "${LOAD:-}" ] || LOAD=$ROOT/$BUILD/bench/http_load
	fi
}

bench_workdir() {
	WORK=$(mktemp -d "/tmp/dpopt-$1.XXXXXX")
	[ "$(id -u)" = 0 ] && chmod 755 "$WORK"
	PID=""
	trap bench_cleanup EXIT INT TERM
}

bench_cleanup() {
	[ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
	pg_cluster_stop "$WORK/pg" >/dev/null 2>&1 || true
	rm -rf "$WORK"
}

bench_start() {
	pg_cluster_start "$WORK/pg" >/dev/null
	psql "$PG_URL" -qc "CREATE DATABASE $1" >/dev/null
	export DPOPT_DATABASE_URL="host=$WORK/pg user=dpopt dbname=$1"
	PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	export DPOPT_LISTEN="127.0.0.1:$PORT" DPOPT_LOG_LEVEL=warn
	"$BIN" >"$WORK/dpoptd.log" 2>&1 &
	PID=$!
	dpopt_service_wait "http://$DPOPT_LISTEN" 2>/dev/null || { cat "$WORK/dpoptd.log" >&2; exit 1; }
	U="http://$DPOPT_LISTEN"
	KEY=$("$BIN" keys create --tenant bench --role owner 2>/dev/null)
	H="Authorization: Bearer $KEY"
}

bench_rows_csv() {
	python3 - "$1" "$2" "$3" "$WORK" <<'PY'
import random, sys
n, d, k, work = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
for j in range(k):
    rng = random.Random(j)
    with open("%s/rows%d.csv" % (work, j), "w") as f:
        for _ in range(n):
            f.write(",".join("%.4f" % (0.4 * (2 * rng.random() - 1)) for _ in range(d))
                    + ",%d\n" % rng.choice((-1, 1)))
PY
}
