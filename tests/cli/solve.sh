#!/bin/sh
# solve.sh DPOPTD SRC: `dpoptd solve` runs dp_sgd.one_pass on the demo CSV
# and on the same rows as LIBSVM, prints the API's result (x of the
# objective's dimension, the privacy event, what was charged) and the
# evaluation on a file; --list prints the catalogue; refused input exits 1
# with an error naming the field (and a row's line), usage errors exit 2.
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
DATA=$SRC/examples/logistic_demo.csv
SCHEMA=$SRC/examples/logistic_demo.schema.json
run() { # run EXTRA...: the demo problem
	"$BIN" solve --data "$DATA" --format csv --schema "$SCHEMA" --algorithm dp_sgd.one_pass \
		--objective logistic --constraint l2_ball:radius=5 --epsilon 1 --delta 1e-6 "$@"
}

run --eval "$DATA" >"$TMP/out.json" 2>"$TMP/err"
check "solve exits 0" test $? -eq 0
check "x has 10 coordinates" sh -c "jq -e '.x | length == 10' '$TMP/out.json' >/dev/null"
check "event is the parallel gaussian" \
	sh -c "jq -e '.privacy.event.type == \"parallel\" and .privacy.event.events[0].type == \"gaussian\"' '$TMP/out.json' >/dev/null"
check "charged epsilon 1" sh -c "jq -e '.privacy.charged.epsilon == 1' '$TMP/out.json' >/dev/null"
# The evaluation is the loss and accuracy of the returned x on the file,
# recomputed here independently (awk, double precision).
jq -r '.x | map(tostring) | join(" ")' "$TMP/out.json" >"$TMP/x"
awk -F, -v xs="$(cat "$TMP/x")" 'BEGIN { n = split(xs, w, " ") }
	NR > 1 { z = 0; for (j = 1; j < NF; j++) z += w[j] * $j; y = $NF
		 t = -y * z; loss += (t > 0 ? t + log(1 + exp(-t)) : log(1 + exp(t)))
		 acc += ((z > 0 ? 1 : -1) == y); m++ }
	END { printf "%.12g %.12g\n", loss / m, acc / m }' "$DATA" >"$TMP/mine"
check "evaluation loss and accuracy recomputed" sh -c "jq -r '\"\\(.evaluation.loss) \\(.evaluation.accuracy)\"' '$TMP/out.json' |
	awk -v mine=\"\$(cat '$TMP/mine')\" '{ split(mine, m, \" \"); d = \$1 - m[1]; if (d < 0) d = -d
		exit !(d <= 1e-9 * m[1] && \$2 == m[2] + 0) }'"
check "evaluation has 20000 rows" sh -c "jq -e '.evaluation.n_rows == 20000' '$TMP/out.json' >/dev/null"

# The same rows as LIBSVM: 1-based index:value pairs after the label.
awk -F, 'NR > 1 { s = $NF; for (j = 1; j < NF; j++) if ($j + 0 != 0) s = s " " j ":" $j; print s }' \
	"$DATA" >"$TMP/demo.svm"
"$BIN" solve --data "$TMP/demo.svm" --format libsvm --schema "$SCHEMA" \
	--algorithm dp_sgd.one_pass --objective '{"name": "logistic", "intercept": true}' \
	--constraint l2_ball:radius=5 --epsilon 1 --delta 1e-6 --eval "$DATA" --eval-format csv \
	>"$TMP/svm.json" 2>"$TMP/err"
check "libsvm solve exits 0" test $? -eq 0
check "intercept adds a coordinate" sh -c "jq -e '.x | length == 11' '$TMP/svm.json' >/dev/null"

"$BIN" solve --list >"$TMP/list.json"
check "list names dp_sgd.one_pass" \
	sh -c "jq -e '[.algorithms[].name] | index(\"dp_sgd.one_pass\") != null' '$TMP/list.json' >/dev/null"

run_err() { # run_err STATUS FIELD [MSG] -- ARGS...: refused with that field
	want=$1 field=$2 msg=$3
	shift 4
	"$BIN" solve "$@" >/dev/null 2>"$TMP/err"
	st=$?
	[ "$st" -eq "$want" ] || { echo "  status $st, want $want: $(cat "$TMP/err")"; return 1; }
	[ -z "$field" ] || jq -e --arg f "$field" '.error.field == $f' "$TMP/err" >/dev/null ||
		{ echo "  $(cat "$TMP/err")"; return 1; }
	[ -z "$msg" ] || grep -q "$msg" "$TMP/err" || { echo "  $(cat "$TMP/err")"; return 1; }
}
COMMON="--schema $SCHEMA --algorithm dp_sgd.one_pass --objective logistic --epsilon 1"
check "bad radius names constraints.x.radius" run_err 1 constraints.x.radius "" -- \
	--data "$DATA" --format csv $COMMON --constraint l2_ball:radius=-1 --delta 1e-6
check "unknown algorithm named" run_err 1 algorithm "" -- \
	--data "$DATA" --format csv --schema "$SCHEMA" --algorithm nope --objective logistic \
	--epsilon 1 --constraint l2_ball:radius=1 --delta 1e-6
check "delta >= 1/n refused" run_err 1 privacy.delta "" -- \
	--data "$DATA" --format csv $COMMON --constraint l2_ball:radius=1 --delta 1e-3
printf '0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,0.1,1\n0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,0.1,0.5\n' \
	>"$TMP/bad.csv"
check "bad label names its line" run_err 1 data "line 2" -- \
	--data "$TMP/bad.csv" --format csv $COMMON --constraint l2_ball:radius=1 --delta 1e-6
check "missing option is a usage error" run_err 2 "" "" -- --data "$DATA"

[ "$fails" -eq 0 ] && echo "solve: all checks passed"
exit "$fails"
