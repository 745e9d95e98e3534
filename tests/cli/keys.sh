#!/bin/sh
# keys.sh DPOPTD: `dpoptd keys create|list|revoke|rotate` against a fresh
# database (run under tests/integration/with_pg.sh, which sets
# DPOPT_TEST_PG).  Keys are printed once and stored hashed only; list shows
# state without secrets; revoke and rotate (with and without --grace) leave
# the key rows and audit rows expected; bad usage exits 2, errors exit 1.
set -u
BIN=$1
DB="dpopt_cli_keys_$$"
psql "$DPOPT_TEST_PG dbname=postgres" -qAtc "CREATE DATABASE $DB" >/dev/null || exit 1
DPOPT_DATABASE_URL="$DPOPT_TEST_PG dbname=$DB"
export DPOPT_DATABASE_URL
DPOPT_LOG_LEVEL=error
export DPOPT_LOG_LEVEL
sql() { psql "$DPOPT_DATABASE_URL" -qAtc "$1"; }
fails=0
n=0
check() { # check NAME CONDITION...
	name=$1
	shift
	n=$((n + 1))
	if "$@"; then echo "ok $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi
}

k1=$("$BIN" keys create --tenant acme --role owner)
check "create prints a key" sh -c "echo '$k1' | grep -Eq '^dpk_[0-9a-f]{16}_[0-9a-f]{64}$'"
id1=$(echo "$k1" | cut -c5-20)
secret1=$(echo "$k1" | cut -c22-)
check "stored hashed only" test "$(sql "SELECT count(*) FROM api_keys WHERE id = '$id1'
	AND key_hash = sha256(convert_to('$k1', 'UTF8'))")" = 1
k2=$("$BIN" keys create --tenant acme --role analyst)
id2=$(echo "$k2" | cut -c5-20)
"$BIN" keys create --tenant beta --role owner >/dev/null

out=$("$BIN" keys list --tenant acme)
check "list: two keys of acme" test "$(echo "$out" | wc -l)" = 2
check "list: state active" sh -c "echo '$out' | grep -q \"^$id2	acme	analyst	active	\""
check "list: no secret" sh -c "! echo '$out' | grep -q '$secret1'"
check "list: every tenant" test "$("$BIN" keys list | wc -l)" = 3

check "revoke" sh -c "'$BIN' keys revoke $id2 >/dev/null"
check "revoked now" test "$(sql "SELECT count(*) FROM api_keys WHERE id = '$id2' AND revoked_at <= now()")" = 1
check "list: revoked" sh -c "'$BIN' keys list --tenant acme | grep -q \"^$id2	acme	analyst	revoked	\""
check "revoke twice: error" sh -c "! '$BIN' keys revoke $id2 2>/dev/null"

k3=$("$BIN" keys rotate "$id1")
id3=$(echo "$k3" | cut -c5-20)
check "rotate prints a new key" sh -c "echo '$k3' | grep -Eq '^dpk_[0-9a-f]{16}_[0-9a-f]{64}$' && [ '$id3' != '$id1' ]"
check "rotate: same tenant and role, old revoked" test "$(sql "SELECT count(*) FROM api_keys n
	JOIN api_keys o ON o.id = n.rotated_from WHERE n.id = '$id3' AND n.tenant_id = 'acme'
	AND n.role = 'owner' AND o.id = '$id1' AND o.revoked_at <= now() AND n.revoked_at IS NULL")" = 1
k4=$("$BIN" keys rotate "$id3" --grace 3600)
id4=$(echo "$k4" | cut -c5-20)
check "rotate --grace: old expiring" sh -c "'$BIN' keys list --tenant acme | grep -q \"^$id3	acme	owner	expiring	\""
check "rotate --grace: old valid for the grace" test "$(sql "SELECT count(*) FROM api_keys
	WHERE id = '$id3' AND revoked_at > now() + interval '3500 seconds'")" = 1
check "rotate a revoked key: error" sh -c "! '$BIN' keys rotate $id1 2>/dev/null"

check "audit: operator rows" test "$(sql "SELECT count(*) FROM audit_log WHERE via = 'cli'
	AND actor_role = 'operator' AND actor_key_id IS NULL AND client_address IS NULL")" = 8
check "audit: revoke row names the key" test "$(sql "SELECT count(*) FROM audit_log
	WHERE action = 'key.revoke' AND key_id = '$id2' AND tenant_id = 'acme'")" = 1
check "audit: rotation rows" test "$(sql "SELECT count(*) FROM audit_log WHERE key_id = '$id4'
	AND action = 'key.create' AND detail->>'rotated_from' = '$id3'")" = 1

"$BIN" keys rotate "$id4" --grace -1 >/dev/null 2>&1
check "bad grace: usage" test $? = 2
"$BIN" keys create --tenant acme >/dev/null 2>&1
check "create without role: usage" test $? = 2
"$BIN" keys create --tenant acme --role root >/dev/null 2>&1
check "create bad role: error" test $? = 1
"$BIN" keys frobnicate >/dev/null 2>&1
check "unknown subcommand: usage" test $? = 2
"$BIN" keys revoke nothex >/dev/null 2>&1
check "revoke unknown: error" test $? = 1

psql "$DPOPT_TEST_PG dbname=postgres" -qAtc "DROP DATABASE $DB" >/dev/null
echo "$((n - fails)) passed, $fails failed"
[ "$fails" = 0 ]
