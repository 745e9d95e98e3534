#!/bin/sh
# with_pg.sh CMD...: run CMD against a throwaway PostgreSQL cluster.
#
# The cluster lives in a fresh directory under /tmp, listens only on a Unix
# socket inside it (scripts/lib/pg.sh), and is stopped and removed however
# CMD ends.  CMD sees DPOPT_TEST_PG, an admin conninfo without dbname, and
# creates its own databases.  The exit status is CMD's.
set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
. "$SRC/scripts/lib/pg.sh"

TMP=$(mktemp -d /tmp/dpopt-pg.XXXXXX)
# As root the cluster runs as nobody (initdb refuses root): it must be able
# to enter and write the directory.
chmod 755 "$TMP"
if [ "$(id -u)" = 0 ]; then
	chown nobody "$TMP"
fi

cleanup() {
	pg_cluster_stop "$TMP"
	rm -rf "$TMP"
}
trap cleanup EXIT
# A signal must still run the EXIT trap (plain sh skips it on a signal).
trap 'exit 130' INT
trap 'exit 143' TERM

pg_cluster_start "$TMP"
DPOPT_TEST_PG="host=$TMP user=dpopt"
export DPOPT_TEST_PG

set +e
"$@"
rc=$?
set -e
exit "$rc"
