#!/bin/sh
# image.sh SRC: the container image, built for real from the Dockerfile and
# run (under tests/integration/with_pg.sh, which sets DPOPT_TEST_PG).
#
# Builds with `buildah bud --isolation chroot` (the base image made locally
# once by base_image.sh); checks the image (size <= 120 MB, non-root UID,
# STOPSIGNAL, port, OCI labels, no compiler); then runs the image's dpoptd
# with `buildah run --isolation chroot` on the host network against the
# throwaway PostgreSQL (its socket directory bound in): `dpoptd migrate`,
# `dpoptd keys create`, the server (JSON log lines on stdout), a dataset, a
# private run and its result, /metrics through `promtool check metrics`,
# then SIGTERM and the drain.  A machine that cannot build or run images
# fails here with the reason.
set -u
SRC=$1
IMAGE=localhost/dpopt:deploy-test
PORT=$((20000 + $$ % 20000))
URL="http://127.0.0.1:$PORT"
PGDIR=$(echo "$DPOPT_TEST_PG" | sed -n 's/.*host=\([^ ]*\).*/\1/p')
WORK=$(mktemp -d /tmp/dpopt-image.XXXXXX)
CTR=""
SERVER=""
n=0
fails=0
check() { # check NAME CONDITION...
	name=$1
	shift
	n=$((n + 1))
	if "$@"; then echo "ok $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi
}
finish() {
	echo "$((n - fails)) passed, $fails failed"
	[ "$fails" = 0 ]
	exit $?
}
fatal() {
	echo "FAIL $*"
	n=$((n + 1))
	fails=$((fails + 1))
	finish
}
cleanup() {
	[ -n "$SERVER" ] && kill -KILL "$SERVER" 2>/dev/null
	[ -n "$CTR" ] && buildah rm "$CTR" >/dev/null 2>&1
	rm -rf "$WORK"
}
trap cleanup EXIT

for t in buildah podman mmdebstrap promtool curl jq psql; do
	command -v $t >/dev/null || fatal "image: $t is missing (scripts/lib/deps.sh installs it)"
done
[ -n "$PGDIR" ] && [ -d "$PGDIR" ] || fatal "image: DPOPT_TEST_PG names no socket directory"

t0=$(date +%s)
sh "$SRC/tests/deploy/base_image.sh" || fatal "image: the base image cannot be made on this machine"
echo "base image ready: $(($(date +%s) - t0)) s"
t0=$(date +%s)
VERSION=$(sed -n "s/^  version: '\(.*\)',/\1/p" "$SRC/meson.build")
buildah bud --isolation chroot --layers --quiet -t "$IMAGE" --build-arg VERSION="$VERSION" \
	-f "$SRC/Dockerfile" "$SRC" >"$WORK/build.log" 2>&1 ||
	{ tail -n 40 "$WORK/build.log"; fatal "image: buildah bud failed"; }
echo "image built: $(($(date +%s) - t0)) s"
# The previous build's image and layers are untagged now: remove them, so
# that repeated runs do not fill the disk (the next build re-fetches its
# packages, about 20 s).
buildah rmi --prune >/dev/null 2>&1 || true

# The image's configuration.
size=$(podman image inspect "$IMAGE" --format '{{.Size}}')
echo "image size: $size bytes ($((size / 1000000)) MB)"
check "size <= 120 MB" test "$size" -le 120000000
conf=$(podman image inspect "$IMAGE" --format '{{json .Config}}')
echo "$conf" >"$WORK/config.json"
check "fixed non-root UID" test "$(jq -r .User "$WORK/config.json")" = "10001:10001"
check "STOPSIGNAL SIGTERM" test "$(jq -r .StopSignal "$WORK/config.json")" = SIGTERM
check "EXPOSE 8080/tcp" test "$(jq -r '.ExposedPorts | keys | join(",")' "$WORK/config.json")" = 8080/tcp
check "entrypoint dpoptd" test "$(jq -r '.Entrypoint | join(" ")' "$WORK/config.json")" = /usr/local/bin/dpoptd
check "OCI labels source, version, licenses" test "$(jq -r '.Labels | [."org.opencontainers.image.source",
	."org.opencontainers.image.version", ."org.opencontainers.image.licenses"] | map(select(. != null and . != "")) | length' \
	"$WORK/config.json")" = 3
check "label version is meson's" test "$(jq -r '.Labels."org.opencontainers.image.version"' "$WORK/config.json")" = "$VERSION"
check "JSON logs on stdout by default" sh -c "jq -r '.Env[]' '$WORK/config.json' | grep -qx DPOPT_LOG_FORMAT=json"

CTR=$(buildah from --name "dpopt-deploy-test-$$" "$IMAGE") || fatal "image: buildah from"
MNT=$(buildah mount "$CTR") || fatal "image: buildah mount"
found=""
for f in gcc cc c99 clang ld as make meson ninja tcc; do
	[ -e "$MNT/usr/bin/$f" ] && found="$found $f"
done
ls "$MNT"/usr/lib/gcc/*/*/cc1 >/dev/null 2>&1 && found="$found cc1"
ls "$MNT"/usr/include/stdio.h >/dev/null 2>&1 && found="$found headers"
check "no compiler, linker or headers in the runtime image (found:${found:- none})" test -z "$found"
check "the binary is there, stripped" sh -c "test -x '$MNT/usr/local/bin/dpoptd' && ! grep -q debug_info '$MNT/usr/local/bin/dpoptd'"
buildah umount "$CTR" >/dev/null

run() { # run ARGS...: the image's command, as the image's user, host network
	buildah run --isolation chroot -v "$PGDIR:$PGDIR" \
		-e DPOPT_DATABASE_URL="$DPOPT_TEST_PG dbname=$DB" -e DPOPT_LISTEN="127.0.0.1:$PORT" \
		-e DPOPT_SHUTDOWN_GRACE_SECONDS=10 "$CTR" -- "$@"
}
touch "$WORK/marker"
sleep 1 # whole seconds of mtime
DB="dpopt_image_$$"
psql "$DPOPT_TEST_PG dbname=postgres" -qAtc "CREATE DATABASE $DB" >/dev/null || fatal "image: create database"
check "runs as UID 10001" test "$(run /usr/bin/id -u)" = 10001
check "dpoptd migrate" sh -c "$(command -v buildah) run --isolation chroot -v '$PGDIR:$PGDIR' \
	-e DPOPT_DATABASE_URL='$DPOPT_TEST_PG dbname=$DB' '$CTR' -- /usr/local/bin/dpoptd migrate 2>'$WORK/migrate.err'"
check "migrate: schema applied" test "$(psql "$DPOPT_TEST_PG dbname=$DB" -qAtc "SELECT count(*) FROM api_keys")" = 0
KEY=$(run /usr/local/bin/dpoptd keys create --tenant demo --role owner 2>"$WORK/keys.err")
check "dpoptd keys create prints only the key on stdout" sh -c "echo '$KEY' | grep -Eqx 'dpk_[0-9a-f]{16}_[0-9a-f]{64}'"

buildah run --isolation chroot -e DPOPT_LOG_FORMAT=text "$CTR" -- /usr/local/bin/dpoptd migrate \
	>/dev/null 2>"$WORK/format.err"
check "DPOPT_LOG_FORMAT=text: exit 1 naming it" sh -c "test $? = 1 && grep -q DPOPT_LOG_FORMAT '$WORK/format.err'"

# The server, in the background; its pid is the dpoptd under buildah's.
run /usr/local/bin/dpoptd >"$WORK/out.log" 2>"$WORK/err.log" &
BUILDAH=$!
i=0
until curl -sf "$URL/readyz" >/dev/null; do
	i=$((i + 1))
	[ $i -lt 600 ] || { cat "$WORK/err.log"; fatal "image: dpoptd not ready in 60 s"; }
	sleep 0.1
done
pid=$BUILDAH
while [ -n "$pid" ] && [ "$(cat /proc/"$pid"/comm 2>/dev/null)" != dpoptd ]; do
	pid=$(pgrep -P "$pid" | head -n 1)
done
SERVER=$pid
[ -n "$SERVER" ] || fatal "image: no dpoptd process under buildah $BUILDAH"
check "server runs as UID 10001" test "$(awk '/^Uid:/ {print $2}' /proc/"$SERVER"/status)" = 10001

AUTH="Authorization: Bearer $KEY"
DS=$(curl -sf -X POST "$URL/v1/datasets" -H "$AUTH" -H 'Content-Type: application/json' \
	--data '{"name": "image-smoke", "schema": {"features": 10, "task": "binary"},
	         "bounds": {"feature_l2": 1.0}, "budget": {"epsilon": 3.0, "delta": 1e-5},
	         "accounting_mode": "basic"}' | jq -r .id)
check "dataset created" test -n "$DS" -a "$DS" != null
check "dataset uploaded" sh -c "curl -sf -X PUT '$URL/v1/datasets/$DS/data' -H '$AUTH' \
	-H 'Content-Type: text/csv' --data-binary @'$SRC/examples/logistic_demo.csv' >/dev/null"
RUN=$(curl -sf -X POST "$URL/v1/datasets/$DS/runs" -H "$AUTH" -H 'Content-Type: application/json' \
	--data '{"algorithm": "dp_sgd.one_pass", "objective": {"name": "logistic"},
	         "constraints": {"x": {"kind": "l2_ball", "radius": 5}},
	         "privacy": {"epsilon": 1.0, "delta": 1e-6}}' | jq -r .id)
check "run queued" test -n "$RUN" -a "$RUN" != null
i=0
STATE=""
while [ $i -lt 600 ]; do
	STATE=$(curl -sf "$URL/v1/runs/$RUN" -H "$AUTH" | jq -r .state)
	case $STATE in succeeded | failed | cancelled) break ;; esac
	i=$((i + 1))
	sleep 0.1
done
check "run succeeded" test "$STATE" = succeeded
check "result has 10 coefficients" test "$(curl -sf "$URL/v1/runs/$RUN" -H "$AUTH" | jq '.result.x | length')" = 10
check "one charge: epsilon spent 1" test "$(curl -sf "$URL/v1/datasets/$DS" -H "$AUTH" | jq .budget.epsilon.spent)" = 1

curl -sf "$URL/metrics" >"$WORK/metrics.txt"
check "/metrics passes promtool check metrics" sh -c "promtool check metrics <'$WORK/metrics.txt'"
check "/metrics has the work rate gauge" grep -q '^dpopt_work_rate ' "$WORK/metrics.txt"

# SIGTERM: the drain, timed.
t0=$(date +%s%N)
kill -TERM "$SERVER"
wait "$BUILDAH"
rc=$?
took_ms=$((($(date +%s%N) - t0) / 1000000))
SERVER=""
echo "drain: SIGTERM to exit $took_ms ms"
check "exit 0 after SIGTERM" test "$rc" = 0
check "drain within DPOPT_SHUTDOWN_GRACE_SECONDS (10 s)" test "$took_ms" -lt 10000
check "stopped logged" grep -q '"msg":"stopped"' "$WORK/out.log"
check "every stdout line is one JSON object" python3 -c 'import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) > 3
for l in lines:
    assert isinstance(json.loads(l), dict), l' "$WORK/out.log"
check "no log line on stderr" test ! -s "$WORK/err.log"
check "an access log line per request" grep -q '"msg":"access method=GET route=/readyz status=200' "$WORK/out.log"
# Read-only root filesystem friendly: after all of the above, nothing in
# the container's filesystem changed outside /tmp (no file written; buildah
# itself touches the directory /run).
MNT=$(buildah mount "$CTR") || fatal "image: buildah mount"
find "$MNT" -xdev -newer "$WORK/marker" ! -type d ! -path "$MNT/tmp/*" |
	sed "s|^$MNT||" >"$WORK/written"
check "wrote nothing outside /tmp ($(tr '\n' ' ' <"$WORK/written"))" test ! -s "$WORK/written"
buildah umount "$CTR" >/dev/null
psql "$DPOPT_TEST_PG dbname=postgres" -qAtc "DROP DATABASE $DB" >/dev/null
finish
