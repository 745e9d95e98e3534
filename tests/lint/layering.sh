#!/bin/sh
# layering.sh SRC: the dependency rules of docs/conventions.md §2, as
# greps.  algorithms/ is pure computation: no HTTP, JSON, database,
# threads or stdio; common/ includes nothing from the other trees; only
# noise.c draws DP noise (no other file calls a noise primitive's
# internals or the C library's rand()).
set -u
SRC=$1
fail=0
bad() { echo "layering: $*"; fail=1; }

for f in $(find "$SRC/algorithms" "$SRC/common" -name '*.[ch]'); do
	if grep -nE '#include <(jansson|microhttpd|libpq-fe|pthread)\.h>' "$f"; then
		bad "$f includes a service library"
	fi
done
for f in $(find "$SRC/algorithms" -name '*.[ch]'); do
	grep -nE '#include <stdio\.h>' "$f" && bad "$f includes stdio.h (no printing in algorithms/)"
	grep -nE '\b(rand|random|drand48|srand)\s*\(' "$f" && bad "$f uses the C library's generator"
done
for f in $(find "$SRC/common" -name '*.[ch]'); do
	grep -nE '#include "(alg|objective|constraint|data|http|db|runs|datasets)\.h"' "$f" &&
		bad "$f (common/) includes from algorithms/ or service/"
done
# All DP noise is drawn in algorithms/privacy/noise.c.
for f in $(find "$SRC/algorithms" "$SRC/service" -name '*.c' ! -path '*/privacy/noise.c'); do
	grep -nE '\b(log|sqrt)\s*\(\s*-?\s*2(\.0)?\s*\*\s*log\s*\(' "$f" &&
		bad "$f looks like it samples Gaussian noise itself (Box-Muller)"
done
# common/rng_gauss.h is randomness that is NOT privacy noise (issue 9): the
# privacy layer never includes it, and no noise goes through it.
grep -rnE '#include "rng_gauss\.h"' "$SRC/algorithms/privacy" &&
	bad "algorithms/privacy/ includes rng_gauss.h (privacy noise goes through noise.h only)"
# Set kinds dispatch through the table of operations (algorithms/constraint.c,
# service/constraint_json.c; issue 9): no code switches over kinds, and no
# switch on an enum cast to int (which silences -Wswitch) anywhere.
grep -rnE 'switch \(\(int\)' "$SRC/algorithms" "$SRC/common" "$SRC/service" "$SRC/tests" \
	--include='*.c' --include='*.h' && bad "a switch on an enum cast to int (-Wswitch cannot see it)"
grep -rnE 'case CONSTRAINT_' "$SRC/algorithms" "$SRC/common" "$SRC/service" --include='*.c' |
	grep -vE 'case CONSTRAINT_(PNORM_OUTER|ENTROPIC)_' &&
	bad "a switch over constraint kinds (add the operation to the kind's table row)"
# The audits' white-box hook (algorithms/testing_hook.h) exists for tests:
# nothing in the service may name it, so no request can reach it.
grep -rn 'testing_hook' "$SRC/service" && bad "service/ refers to the audits' testing hook"
# A callee's failure is returned as err_failed(e), never read back as
# e->code (issue 8 item 2: with e == NULL, or an error left unset, that
# read success).  Formatting an error someone handed over is fine.
for f in $(find "$SRC/algorithms" "$SRC/common" "$SRC/service" -name '*.c' ! -path '*/common/err.c'); do
	grep -nE '(return|rc =|: )[[:space:]]*e->code;' "$f" &&
		bad "$f returns e->code (use err_failed(e))"
done
[ $fail = 0 ] && echo "layering: ok"
exit $fail
