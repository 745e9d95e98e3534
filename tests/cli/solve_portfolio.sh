#!/bin/sh
# solve_portfolio.sh DPOPTD SRC: `dpoptd solve` with log_optimal_portfolio
# on the demo market (examples/returns_demo.csv, 4000 periods of 5 assets,
# bounds.feature_range [0.8, 1.25]; docs/algorithms/portfolio.md):
# mirror_descent.maurey_sco returns a K-vertex average on the unit simplex
# under self_composed(pure) over its draws; frank_wolfe.private's portfolio
# has a mean log-loss on the rows below the uniform portfolio's (0.0706;
# measured 0.0129); another set is refused naming constraints.x.kind, LIBSVM
# rows (absent cells 0, outside the range) naming data, --save-model (a
# portfolio is not a predictor) naming objective.name; --list lists the
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
# jq 1.6 -e exits 0 on an empty file: refuse one first.
jqf() { # jqf FILE FILTER: FILTER true on the non-empty FILE
	test -s "$1" && jq -e "$2" "$1" >/dev/null
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
	jqf "$TMP/msc.json" '(.x | length) == 5 and all(.x[]; . >= 0) and ((.x | add) - 1 | fabs) < 1e-9'
check "maurey_sco: self_composed(pure) over the draws" \
	jqf "$TMP/msc.json" '.privacy.event.type == "self_composed" and .privacy.event.count == .params_used.draw_count and .privacy.event.event.type == "pure"'
check "maurey_sco: a K-vertex average, clamp b / a" \
	jqf "$TMP/msc.json" '.params_used.draws as $k | all(.x[]; ((. * $k) - ((. * $k) | round) | fabs) < 1e-9) and ((.params_used.lipschitz_linf - 1.5625) | fabs) < 1e-12'
run frank_wolfe.private simplex:scale=1 --eval "$DATA" >"$TMP/fw.json" 2>"$TMP/err"
check "frank_wolfe.private exits 0" test $? -eq 0
check "frank_wolfe.private: log-loss below the uniform portfolio's 0.0706" \
	jqf "$TMP/fw.json" '.evaluation.loss < 0.0706 and ((.x | add) - 1 | fabs) < 1e-9'
run mirror_descent.maurey_sco l1_ball:radius=1 >"$TMP/out" 2>"$TMP/l1.json"
check "an l1 ball: refused naming constraints.x.kind" \
	jqf "$TMP/l1.json" '.error.field == "constraints.x.kind"'
printf '1:1.1 2:0.9 3:1 4:1 5:1\n' >"$TMP/r.svm"
"$BIN" solve --data "$TMP/r.svm" --format libsvm --schema "$SCHEMA" \
	--algorithm mirror_descent.maurey_sco --objective log_optimal_portfolio \
	--constraint simplex:scale=1 --epsilon 1 --delta 1e-6 >"$TMP/out" 2>"$TMP/svm.json"
check "LIBSVM rows: refused naming data" \
	jqf "$TMP/svm.json" '.error.field == "data" and (.error.message | test("feature_range"))'
run frank_wolfe.private simplex:scale=1 --save-model "$TMP/model.json" >"$TMP/out" 2>"$TMP/model.err"
check "--save-model: no model, refused naming objective.name" \
	jqf "$TMP/model.err" '.error.field == "objective.name"'
"$BIN" solve --list >"$TMP/list.json"
check "list: maurey_sco takes log_optimal_portfolio" \
	jqf "$TMP/list.json" '.algorithms[] | select(.name == "mirror_descent.maurey_sco") | [.objectives[].name] | index("log_optimal_portfolio") != null'

[ "$fails" -eq 0 ] && echo "solve_portfolio: all checks passed"
exit "$fails"
