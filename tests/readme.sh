#!/bin/sh
# readme.sh DPOPTD SRC: run the README's curl examples, in order, against a
# fresh service in the state ./scripts/up leaves it (issue 8, item 8).
#
# Runs under tests/integration/with_pg.sh (DPOPT_TEST_PG).  In a scratch
# directory (examples/ linked from SRC, var/ of its own) it does what
# scripts/up does, with scripts/lib/service.sh's own functions: migrate,
# start DPOPTD on a free port, make var/demo.key, run the demo (which seals
# examples/logistic_demo.csv).  Then tests/readme_block.py turns the
# README's ```sh blocks that run curl into one script, each curl checked
# by rcurl below: a status other than the one the command's comment names
# (any 2xx when it names none) fails the test, and so does a curl that
# never ran.  With DPOPT_TEST_CONTRACT_DIR set, every response is also
# recorded for tests/integration/contract_check.py.
set -eu
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$2" && pwd)
. "$SRC/scripts/lib/service.sh"

WORK=$(mktemp -d /tmp/dpopt-readme.XXXXXX)
STATUS=1
cleanup() {
	if [ -f "$WORK/var/dpoptd.pid" ]; then
		kill "$(cat "$WORK/var/dpoptd.pid")" 2>/dev/null || true
		wait "$(cat "$WORK/var/dpoptd.pid")" 2>/dev/null || true
	fi
	if [ "$STATUS" != 0 ] && [ -f "$WORK/var/dpoptd.log" ]; then
		echo "==== dpoptd log ====" >&2
		tail -n 50 "$WORK/var/dpoptd.log" >&2
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

cd "$WORK"
ln -s "$SRC/examples" examples
mkdir var
psql "$DPOPT_TEST_PG dbname=postgres" -qc "CREATE DATABASE readme" >/dev/null
DPOPT_DATABASE_URL="$DPOPT_TEST_PG dbname=readme"
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
DPOPT_LISTEN=127.0.0.1:$PORT
export DPOPT_DATABASE_URL DPOPT_LISTEN
URL=http://$DPOPT_LISTEN

# What a fresh ./scripts/up does after its build and its PostgreSQL.
"$BIN" migrate 2>>var/dpoptd.log
dpopt_service_start "$BIN"
dpopt_service_wait "$URL"
dpopt_demo_key "$BIN"
dpopt_demo "$URL" >var/demo.out || { cat var/demo.out >&2; echo "readme: the demo failed" >&2; exit 1; }

RCURL_EXPECT=$WORK/expect
RCURL_FAIL=$WORK/failures
RCURL_RAN=$WORK/ran
RCURL_REC=""
if [ -n "${DPOPT_TEST_CONTRACT_DIR:-}" ]; then
	mkdir -p "$DPOPT_TEST_CONTRACT_DIR"
	rm -f "$DPOPT_TEST_CONTRACT_DIR"/readme-*.jsonl
	RCURL_REC=$DPOPT_TEST_CONTRACT_DIR/readme-$$.jsonl
fi
export RCURL_EXPECT RCURL_FAIL RCURL_RAN RCURL_REC URL
: >"$RCURL_FAIL"
: >"$RCURL_RAN"
python3 "$SRC/tests/readme_block.py" "$SRC/README.md" "$URL" "$RCURL_EXPECT" >block.sh

# rcurl ID ARGS...: curl ARGS, its body on stdout as curl would print it;
# the status checked against line ID of RCURL_EXPECT.
cat >rcurl.sh <<'EOF'
rcurl() {
	_id=$1
	shift
	_body=$(mktemp)
	_meta=$(mktemp)
	command curl -o "$_body" -w '%{http_code}\n%{method}\n%{url_effective}\n%{content_type}\n' \
		"$@" >"$_meta" || true
	cat "$_body"
	_status=$(sed -n 1p "$_meta")
	_method=$(sed -n 2p "$_meta")
	_url=$(sed -n 3p "$_meta")
	_ctype=$(sed -n 4p "$_meta")
	_line=$(awk -v id="$_id" '$1 == id { print $2 }' "$RCURL_EXPECT")
	_want=$(awk -v id="$_id" '$1 == id { $1 = ""; $2 = ""; print }' "$RCURL_EXPECT")
	echo "$_id" >>"$RCURL_RAN"
	_ok=0
	if [ -z "$(echo $_want)" ]; then
		case $_status in 2??) _ok=1 ;; esac
	else
		for _w in $_want; do [ "$_w" = "$_status" ] && _ok=1; done
	fi
	[ $_ok = 1 ] || echo "README line $_line: $_method $_url: status $_status, want" \
		"$(echo ${_want:-2xx}): $(head -c 400 "$_body")" >>"$RCURL_FAIL"
	if [ -n "$RCURL_REC" ] && [ "$_status" != 000 ]; then
		jq -nc --arg m "$_method" --arg p "${_url#"$URL"}" --argjson s "$_status" \
			--arg c "$_ctype" --rawfile b "$_body" \
			'{method: $m, path: $p, status: $s, content_type: $c, body: $b}' >>"$RCURL_REC"
	fi
	rm -f "$_body" "$_meta"
}
EOF
cat rcurl.sh block.sh >readme-run.sh
if ! sh -eu readme-run.sh >readme.out 2>&1; then
	echo "readme: the README's examples stopped with an error:" >&2
	tail -n 20 readme.out >&2
	cat "$RCURL_FAIL" >&2
	exit 1
fi
FAILED=0
if [ -s "$RCURL_FAIL" ]; then
	echo "readme: unexpected statuses:" >&2
	cat "$RCURL_FAIL" >&2
	FAILED=1
fi
for id in $(awk '{ print $1 }' "$RCURL_EXPECT"); do
	grep -qx "$id" "$RCURL_RAN" || {
		echo "readme: curl #$id (README line $(awk -v id="$id" '$1 == id { print $2 }' "$RCURL_EXPECT")) never ran" >&2
		FAILED=1
	}
done
[ "$FAILED" = 0 ] || exit 1
echo "readme: $(sort -u "$RCURL_RAN" | wc -l) curl commands of README.md, $(wc -l <"$RCURL_RAN") requests, all as documented"
STATUS=0
