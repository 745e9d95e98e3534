#!/bin/sh
# solve_portfolio.sh DPOPTD SRC: `dpoptd solve` with log_optimal_portfolio
# on the demo market (examples/returns_demo.csv, 4000 periods of 5 assets,
# bounds.feature_range [0.8, 1.25]; docs/algorithms/portfolio.md):
# mirror_descent.maurey_sco returns a K-vertex average on the unit simplex
# under self_composed(pure) over its draws; frank_wolfe.private's portfolio
# has a mean log-loss on the rows below the uniform portfolio's (0.0706;
# measured 0.0129); another set is refused naming constraints.x.kind, LIBSVM
# rows (absent cells 0, outside the range) naming data; --list lists the
# objective under maurey_sco.
set -u
BIN=$1
SRC=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0
check() { # check NAME CONDITION...
	name=$1
	shift
	if "$@"; then echo "ok $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi
}
DATA=$SRC/examples/returns_demo.csv
SCHEMA=$SRC/examples/returns_demo.schema.json
run() { # run ALGORITHM SET EXTRA...
	alg=$1
	set=$2
	shift 2
	"$BIN" solve --data "$DATA" --format csv --schema "$SCHEMA" --algorithm "$alg" \
		--objective log_optimal_portfolio --constraint "$set" --epsilon 1 --delta 1e-6 "$@"
}

run mirror_descent.maurey_sco simplex:scale=1 >"$TMP/msc.json" 2>"$TMP/err"
check "maurey_sco exits 0" test $? -eq 0
check "maurey_sco: 5 weights >= 0 summing to 1" \
	sh -c "jq -e '(.x | length) == 5 and all(.x[]; . >= 0) and ((.x | add) - 1 | fabs) < 1e-9' '$TMP/msc.json' >/dev/null"
check "maurey_sco: self_composed(pure) over the draws" \
	sh -c "jq -e '.privacy.event.type == \"self_composed\" and .privacy.event.count == .params_used.draw_count and .privacy.event.event.type == \"pure\"' '$TMP/msc.json' >/dev/null"
check "maurey_sco: a K-vertex average, clamp b / a" \
	sh -c "jq -e '.params_used.draws as \$k | all(.x[]; ((. * \$k) - ((. * \$k) | round) | fabs) < 1e-9) and ((.params_used.lipschitz_linf - 1.5625) | fabs) < 1e-12' '$TMP/msc.json' >/dev/null"
run frank_wolfe.private simplex:scale=1 --eval "$DATA" >"$TMP/fw.json" 2>"$TMP/err"
check "frank_wolfe.private exits 0" test $? -eq 0
check "frank_wolfe.private: log-loss below the uniform portfolio's 0.0706" \
	sh -c "jq -e '.evaluation.loss < 0.0706 and ((.x | add) - 1 | fabs) < 1e-9' '$TMP/fw.json' >/dev/null"
run mirror_descent.maurey_sco l1_ball:radius=1 >"$TMP/out" 2>"$TMP/l1.json"
check "an l1 ball: refused naming constraints.x.kind" \
	sh -c "jq -e '.error.field == \"constraints.x.kind\"' '$TMP/l1.json' >/dev/null"
printf '1:1.1 2:0.9 3:1 4:1 5:1\n' >"$TMP/r.svm"
"$BIN" solve --data "$TMP/r.svm" --format libsvm --schema "$SCHEMA" \
	--algorithm mirror_descent.maurey_sco --objective log_optimal_portfolio \
	--constraint simplex:scale=1 --epsilon 1 --delta 1e-6 >"$TMP/out" 2>"$TMP/svm.json"
check "LIBSVM rows: refused naming data" \
	sh -c "jq -e '.error.field == \"data\" and (.error.message | test(\"feature_range\"))' '$TMP/svm.json' >/dev/null"
"$BIN" solve --list >"$TMP/list.json"
check "list: maurey_sco takes log_optimal_portfolio" \
	sh -c "jq -e '.algorithms[] | select(.name == \"mirror_descent.maurey_sco\") | [.objectives[].name] | index(\"log_optimal_portfolio\") != null' '$TMP/list.json' >/dev/null"

[ "$fails" -eq 0 ] && echo "solve_portfolio: all checks passed"
exit "$fails"
