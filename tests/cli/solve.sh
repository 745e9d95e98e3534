#!/bin/sh
# solve.sh DPOPTD SRC: `dpoptd solve` runs dp_sgd.one_pass on the demo CSV
# and on the same rows as LIBSVM, prints the API's result (x of the
# objective's dimension, the privacy event, what was charged) and the
# evaluation on a file; runs saddle.sgda_one_pass (--constraint-y; x, y
# and the gap), mirror_descent.noisy on an l1 ball and the zeroth-order methods; --list prints the catalogue; refused input exits 1 with an
# error naming the field (and a row's line), usage errors exit 2.
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
check "delta >= 1/n refused, suggesting the flag" run_err 1 privacy.delta "pass --acknowledge-large-delta" -- \
	--data "$DATA" --format csv $COMMON --constraint l2_ball:radius=1 --delta 1e-3
# The dataset key acknowledge_large_delta is the flag --acknowledge-large-delta.
"$BIN" solve --data "$DATA" --format csv $COMMON --constraint l2_ball:radius=1 --delta 1e-3 --mode basic \
	--acknowledge-large-delta >"$TMP/ack.json" 2>"$TMP/err"
check "--acknowledge-large-delta allows delta >= 1/n" sh -c "test $? -eq 0 &&
	jq -e '.privacy.charged.delta == 0.001' '$TMP/ack.json' >/dev/null"
# A delta above 1/1024 (the largest order of the evaluation grid) on a
# renyi ledger: at the calibration's largest noise the RDP conversion is
# below 0, i.e. the Gaussian is (0, delta)-DP, which meets any target; the
# run was once refused ("the (epsilon, delta) conversion gives a
# non-positive epsilon").  The same on the basic ledger's bisection
# (shuffled epochs: the exact curve is 0 there too).
for mode in renyi basic; do
	"$BIN" solve --data "$DATA" --format csv $COMMON --constraint l2_ball:radius=5 --delta 1e-3 \
		--mode $mode --acknowledge-large-delta >"$TMP/d3.json" 2>"$TMP/err"
	check "delta 1e-3 on a $mode ledger: one_pass solves" sh -c "test $? -eq 0 &&
		jq -e '.privacy.charged.delta == 0.001 and .privacy.charged.epsilon == 1' '$TMP/d3.json' >/dev/null"
	"$BIN" solve --data "$DATA" --format csv --schema "$SCHEMA" --algorithm dp_sgd.subsampled \
		--objective logistic --epsilon 1 --constraint l2_ball:radius=5 --delta 1e-3 \
		--params '{"shuffle": true, "epochs": 2}' --mode $mode --acknowledge-large-delta \
		>"$TMP/d3s.json" 2>"$TMP/err"
	check "delta 1e-3 on a $mode ledger: shuffled subsampled solves" sh -c "test $? -eq 0 &&
		jq -e '.privacy.charged.delta == 0.001' '$TMP/d3s.json' >/dev/null"
done
# Progress on stderr, data-independent: "step DONE / TOTAL" lines ending at
# the last step (the one-second threshold lowered to 0 for the test), and
# none for a run shorter than the threshold (raised to a minute, so that a
# slow sanitizer build cannot cross it).
DPOPTD_SOLVE_PROGRESS_AFTER_MS=0 run >/dev/null 2>"$TMP/prog"
check "progress lines end at step TOTAL / TOTAL" sh -c "
	grep -Eq '^dpoptd solve: step [0-9]+ / [0-9]+\$' '$TMP/prog' &&
	tail -n 1 '$TMP/prog' | awk '{ exit !(\$4 == \$6 && \$6 > 0) }'"
DPOPTD_SOLVE_PROGRESS_AFTER_MS=60000 run >/dev/null 2>"$TMP/prog"
check "no progress for a run shorter than the threshold" test ! -s "$TMP/prog"
printf '0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,0.1,1\n0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,0.1,0.5\n' \
	>"$TMP/bad.csv"
check "bad label names its line" run_err 1 data "line 2" -- \
	--data "$TMP/bad.csv" --format csv $COMMON --constraint l2_ball:radius=1 --delta 1e-6
check "missing option is a usage error" run_err 2 "" "" -- --data "$DATA"

# Predictions (model.h): --save-model writes the run's model document,
# --predict scores rows (the dataset's layout minus the label, a header
# allowed); each margin, probability and class is recomputed here from the
# document's coefficients and intercept; --model reads the document back
# and scores the same; JSON {"rows": ...} scores the same as CSV.
head -n 51 "$DATA" | cut -d, -f1-10 >"$TMP/rows.csv"
run --predict "$TMP/rows.csv" --save-model "$TMP/model.json" >"$TMP/pred.json" 2>"$TMP/err"
check "--predict exits 0" test $? -eq 0
check "model document: 10 coefficients, intercept null, objective, event" sh -c "jq -e '(.coefficients | length == 10) and .intercept == null and .objective.name == \"logistic\" and .privacy.event.type == \"parallel\" and .schema.features == 10 and .run_id == null' '$TMP/model.json' >/dev/null"
check "50 predictions" sh -c "jq -e '.predictions | length == 50' '$TMP/pred.json' >/dev/null"
jq -r '.coefficients | map(tostring) | join(" ")' "$TMP/model.json" >"$TMP/w"
recompute() { # recompute PRED.json ROWS.csv ICPT: margins, probabilities, classes
	jq -r '.predictions[] | "\(.margin) \(.probability) \(.class)"' "$1" >"$TMP/got"
	awk -F, -v ws="$(cat "$TMP/w")" -v b="$3" -v got="$TMP/got" 'BEGIN { n = split(ws, w, " ") }
		NR > 1 { z = b; for (j = 1; j <= n; j++) z += w[j] * $j
			 p = 1 / (1 + exp(-z)); c = z > 0 ? 1 : -1
			 if ((getline line < got) <= 0) exit 1
			 split(line, g, " ")
			 if ((g[1] - z)^2 > 1e-24 || (g[2] - p)^2 > 1e-24 || g[3] != c) exit 1
			 m++ }
		END { exit !(m == 50) }' "$2"
}
check "predictions recomputed from the model" recompute "$TMP/pred.json" "$TMP/rows.csv" 0
"$BIN" solve --model "$TMP/model.json" --predict "$TMP/rows.csv" >"$TMP/pred2.json" 2>"$TMP/err"
check "--model scores as the run did" sh -c "jq -S .predictions '$TMP/pred.json' >'$TMP/a' &&
	jq -S .predictions '$TMP/pred2.json' >'$TMP/b' && cmp -s '$TMP/a' '$TMP/b'"
awk -F, 'NR > 1 { printf "%s[%s]", (NR > 2 ? "," : "{\"rows\": ["), $0 } END { print "]}" }' \
	"$TMP/rows.csv" >"$TMP/rows.json"
"$BIN" solve --model "$TMP/model.json" --predict "$TMP/rows.json" >"$TMP/pred3.json" 2>"$TMP/err"
check "JSON rows score as CSV rows" sh -c "jq -S .predictions '$TMP/pred3.json' >'$TMP/c' && cmp -s '$TMP/a' '$TMP/c'"
# With an intercept: the last coordinate, added to every margin.
"$BIN" solve --data "$DATA" --format csv --schema "$SCHEMA" --algorithm dp_sgd.one_pass \
	--objective '{"name": "logistic", "intercept": true}' --constraint l2_ball:radius=5 \
	--epsilon 1 --delta 1e-6 --predict "$TMP/rows.csv" --save-model "$TMP/model_b.json" \
	>"$TMP/pred_b.json" 2>"$TMP/err"
jq -r '.coefficients | map(tostring) | join(" ")' "$TMP/model_b.json" >"$TMP/w"
check "intercept predictions recomputed" recompute "$TMP/pred_b.json" "$TMP/rows.csv" \
	"$(jq -r .intercept "$TMP/model_b.json")"
printf '0,0,0,0,0,0,0,0,0,0\n1,2\n' >"$TMP/short.csv"
check "--predict row of the wrong width names rows" run_err 1 rows "line 2" -- \
	--model "$TMP/model.json" --predict "$TMP/short.csv"
printf '0,0,0,0,0,0,0,0,0,0\n0,0,0,0,0,0,0,0,0,0.123abc\n' >"$TMP/badcell.csv"
check "--predict bad cell names rows and its line" run_err 1 rows "line 2, column 10" -- \
	--model "$TMP/model.json" --predict "$TMP/badcell.csv"
jq '.coefficients = [1, 2]' "$TMP/model.json" >"$TMP/badmodel.json"
check "--model with wrong coefficients names model.coefficients" run_err 1 model.coefficients "" -- \
	--model "$TMP/badmodel.json" --predict "$TMP/rows.csv"
check "--model without --predict is a usage error" run_err 2 "" "" -- --model "$TMP/model.json"

# Declared labels (schema.labels): the demo's -1/1 column spelled no/yes
# trains the same problem (the evaluation on the same rows, recomputed from
# x on the -1/1 file, is identical), and predictions come back as no/yes.
jq '.schema.labels = ["no", "yes"]' "$SCHEMA" >"$TMP/yn.schema.json"
awk -F, 'BEGIN { OFS = "," } NR > 1 { $NF = ($NF == 1 ? "yes" : "no") } { print }' "$DATA" >"$TMP/yn.csv"
"$BIN" solve --data "$TMP/yn.csv" --format csv --schema "$TMP/yn.schema.json" \
	--algorithm dp_sgd.one_pass --objective logistic --constraint l2_ball:radius=5 --epsilon 1 \
	--delta 1e-6 --eval "$TMP/yn.csv" --predict "$TMP/rows.csv" >"$TMP/yn.json" 2>"$TMP/err"
check "labels no/yes: solve exits 0" test $? -eq 0
jq -r '.x | map(tostring) | join(" ")' "$TMP/yn.json" >"$TMP/x"
awk -F, -v xs="$(cat "$TMP/x")" 'BEGIN { n = split(xs, w, " ") }
	NR > 1 { z = 0; for (j = 1; j < NF; j++) z += w[j] * $j; acc += ((z > 0 ? 1 : -1) == $NF); m++ }
	END { printf "%.12g\n", acc / m }' "$DATA" >"$TMP/mine"
check "labels no/yes map to -1/1 (accuracy recomputed on the -1/1 file)" \
	sh -c "jq -e --argjson a \"\$(cat '$TMP/mine')\" '.evaluation.accuracy == \$a' '$TMP/yn.json' >/dev/null"
check "labels no/yes: predicted classes are no/yes by the margin's sign" \
	sh -c "jq -e '[.predictions[] | (.class == (if .margin > 0 then \"yes\" else \"no\" end))] | all' '$TMP/yn.json' >/dev/null"
printf '0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,0.1,yes\n0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,0.1,maybe\n' >"$TMP/yn_bad.csv"
check "a label neither no nor yes is refused naming its line" run_err 1 data "line 2" -- \
	--data "$TMP/yn_bad.csv" --format csv --schema "$TMP/yn.schema.json" \
	--algorithm dp_sgd.one_pass --objective logistic --constraint l2_ball:radius=1 --epsilon 1 --delta 1e-6
jq '.schema.labels = [0, 1]' "$SCHEMA" >"$TMP/01.schema.json"
awk -F, 'BEGIN { OFS = "," } NR > 1 { $NF = ($NF == 1 ? 1 : 0) } { print }' "$DATA" >"$TMP/01.csv"
"$BIN" solve --data "$TMP/01.csv" --format csv --schema "$TMP/01.schema.json" \
	--algorithm dp_sgd.one_pass --objective logistic --constraint l2_ball:radius=5 --epsilon 1 \
	--delta 1e-6 --eval "$TMP/01.csv" >"$TMP/01.json" 2>"$TMP/err"
jq -r '.x | map(tostring) | join(" ")' "$TMP/01.json" >"$TMP/x"
awk -F, -v xs="$(cat "$TMP/x")" 'BEGIN { n = split(xs, w, " ") }
	NR > 1 { z = 0; for (j = 1; j < NF; j++) z += w[j] * $j; acc += ((z > 0 ? 1 : -1) == $NF); m++ }
	END { printf "%.12g\n", acc / m }' "$DATA" >"$TMP/mine"
check "labels [0, 1] map to -1/1 (accuracy recomputed on the -1/1 file)" \
	sh -c "jq -e --argjson a \"\$(cat '$TMP/mine')\" '.evaluation.accuracy == \$a' '$TMP/01.json' >/dev/null"
awk -F, 'NR > 1 { s = ($NF == 1 ? 1 : 0); for (j = 1; j < NF; j++) if ($j + 0 != 0) s = s " " j ":" $j; print s }' \
	"$DATA" >"$TMP/01.svm"
"$BIN" solve --data "$TMP/01.svm" --format libsvm --schema "$TMP/01.schema.json" \
	--algorithm dp_sgd.one_pass --objective logistic --constraint l2_ball:radius=5 --epsilon 1 \
	--delta 1e-6 --eval "$TMP/01.csv" --eval-format csv >"$TMP/01svm.json" 2>"$TMP/err"
check "labels [0, 1] read from LIBSVM" test $? -eq 0
jq -r '.x | map(tostring) | join(" ")' "$TMP/01svm.json" >"$TMP/x"
awk -F, -v xs="$(cat "$TMP/x")" 'BEGIN { n = split(xs, w, " ") }
	NR > 1 { z = 0; for (j = 1; j < NF; j++) z += w[j] * $j; acc += ((z > 0 ? 1 : -1) == $NF); m++ }
	END { printf "%.12g\n", acc / m }' "$DATA" >"$TMP/mine"
check "labels [0, 1] from LIBSVM map to -1/1" \
	sh -c "jq -e --argjson a \"\$(cat '$TMP/mine')\" '.evaluation.accuracy == \$a' '$TMP/01svm.json' >/dev/null"
check "string labels refused for LIBSVM naming format" run_err 1 format "" -- \
	--data "$TMP/01.svm" --format libsvm --schema "$TMP/yn.schema.json" \
	--algorithm dp_sgd.one_pass --objective logistic --constraint l2_ball:radius=5 --epsilon 1 --delta 1e-6

# A saddle method: saddle.sgda_one_pass on bilinear pairs (a, b), the two
# blocks of an unlabeled schema; the result's x and y blocks and the gap
# on the evaluation file, recomputed here in closed form over l2 balls:
# gap = <mu_a, x> + R_y |g x - mu_b| + <mu_b, y> + R_x |g y + mu_a|.
cat >"$TMP/pairs.schema.json" <<'EOS'
{"schema": {"features": 4, "task": "unlabeled", "blocks": [
  {"name": "a", "size": 2, "bounds": {"l2": 1}}, {"name": "b", "size": 2, "bounds": {"l2": 1}}]},
 "bounds": {"feature_l2": 1.5}}
EOS
awk 'BEGIN { s = 7; for (i = 0; i < 3000; i++) { line = ""
	for (j = 1; j <= 4; j++) { s = (s * 1103515245 + 12345) % 2147483648
		p = (j == 1 ? 0.8 : j == 4 ? 0.25 : 0.5)
		line = line (j > 1 ? "," : "") (s / 2147483648 < p ? "0.7" : "-0.7") }
	print line } }' >"$TMP/pairs.csv"
SADDLE="--data $TMP/pairs.csv --format csv --schema $TMP/pairs.schema.json --algorithm saddle.sgda_one_pass --epsilon 1 --delta 1e-6"
"$BIN" solve $SADDLE --objective '{"name": "bilinear", "coupling": 0.5}' \
	--constraint l2_ball:radius=1 --constraint-y l2_ball:radius=1 --eval "$TMP/pairs.csv" \
	>"$TMP/saddle.json" 2>"$TMP/err"
check "saddle solve exits 0" test $? -eq 0
check "saddle x and y have 2 entries each" \
	sh -c "jq -e '(.x | length == 2) and (.y | length == 2)' '$TMP/saddle.json' >/dev/null"
check "saddle gap brackets ordered" sh -c "jq -e '.evaluation.strong_gap.lower <= .evaluation.strong_gap.upper and .evaluation.weak_gap.lower <= .evaluation.strong_gap.upper and .evaluation.n_rows == 3000' '$TMP/saddle.json' >/dev/null"
jq -r '[.x[], .y[], .evaluation.strong_gap.lower, .evaluation.strong_gap.upper] | map(tostring) | join(" ")' \
	"$TMP/saddle.json" >"$TMP/u"
check "saddle gap recomputed in closed form" sh -c "awk -F, -v u=\"\$(cat '$TMP/u')\" '
	BEGIN { split(u, v, \" \") }
	{ for (j = 1; j <= 4; j++) m[j] += \$j; n++ }
	END { for (j = 1; j <= 4; j++) m[j] /= n; g = 0.5
		gap = m[1] * v[1] + m[2] * v[2] + sqrt((g * v[1] - m[3])^2 + (g * v[2] - m[4])^2) \\
		    + m[3] * v[3] + m[4] * v[4] + sqrt((g * v[3] + m[1])^2 + (g * v[4] + m[2])^2)
		exit !(v[5] - 1e-9 <= gap && gap <= v[6] + 1e-9) }' '$TMP/pairs.csv'"
# saddle.smd_maurey on the same pairs over two simplices: the result is an
# average of T vertices per player (x, y >= 0, each summing to 1, every
# entry a multiple of 1/T with T from params_used), with its gap brackets.
"$BIN" solve --data "$TMP/pairs.csv" --format csv --schema "$TMP/pairs.schema.json" \
	--algorithm saddle.smd_maurey --epsilon 1 --delta 1e-6 \
	--objective '{"name": "bilinear", "coupling": 0.5}' --constraint simplex:scale=1 \
	--constraint-y simplex:scale=1 --eval "$TMP/pairs.csv" >"$TMP/smd.json" 2>"$TMP/err"
check "smd_maurey solve exits 0" test $? -eq 0
check "smd_maurey x and y are vertex averages" sh -c "jq -e '.steps as \$t
	| [.x[], .y[]] | all(. >= 0 and ((. * \$t) - ((. * \$t) | round) | fabs) < 1e-9)' \
	'$TMP/smd.json' >/dev/null && jq -e '((.x | add) - 1 | fabs) < 1e-12 and ((.y | add) - 1 | fabs) < 1e-12' '$TMP/smd.json' >/dev/null"
check "smd_maurey gap brackets ordered" sh -c "jq -e '.evaluation.strong_gap.lower <= .evaluation.strong_gap.upper' '$TMP/smd.json' >/dev/null"
# saddle.smd_maurey with x over a vertex list (constraints.x.kind
# "polytope"): the unit square's corners given as a JSON --constraint, and
# the same list from a file (@FILE): x is an average of T listed vertices
# (every entry in [0, 1] and a multiple of 1/T), the gap evaluator (which
# projects onto the list) brackets; a ragged list is refused naming the row.
"$BIN" solve --data "$TMP/pairs.csv" --format csv --schema "$TMP/pairs.schema.json" \
	--algorithm saddle.smd_maurey --epsilon 1 --delta 1e-6 \
	--objective '{"name": "bilinear", "coupling": 0.5}' \
	--constraint '{"kind": "polytope", "vertices": [[0, 0], [1, 0], [0, 1], [1, 1]]}' \
	--constraint-y simplex:scale=1 --eval "$TMP/pairs.csv" >"$TMP/poly.json" 2>"$TMP/err"
check "smd_maurey over a polytope exits 0" test $? -eq 0
check "smd_maurey polytope: x an average of T listed vertices" sh -c "jq -e '.steps as \$t
	| .params_used.vertices_x == 4 and (.x | length == 2)
	and (.x | all(. >= 0 and . <= 1 and ((. * \$t) - ((. * \$t) | round) | fabs) < 1e-9))' \
	'$TMP/poly.json' >/dev/null"
check "smd_maurey polytope: gap brackets ordered" sh -c "jq -e '.evaluation.strong_gap.lower <= .evaluation.strong_gap.upper' '$TMP/poly.json' >/dev/null"
echo '{"kind": "polytope", "vertices": [[0, 0], [1, 0], [0, 1], [1, 1]]}' >"$TMP/square.json"
"$BIN" solve --data "$TMP/pairs.csv" --format csv --schema "$TMP/pairs.schema.json" \
	--algorithm saddle.smd_maurey --epsilon 1 --delta 1e-6 \
	--objective '{"name": "bilinear", "coupling": 0.5}' --constraint "@$TMP/square.json" \
	--constraint-y simplex:scale=1 >"$TMP/poly2.json" 2>"$TMP/err"
check "smd_maurey polytope from @FILE: the same plan (runs draw fresh seeds)" \
	sh -c "jq -e --slurpfile a '$TMP/poly.json' '.params_used == \$a[0].params_used and .privacy == \$a[0].privacy' '$TMP/poly2.json' >/dev/null"
"$BIN" solve --data "$TMP/pairs.csv" --format csv --schema "$TMP/pairs.schema.json" \
	--algorithm saddle.smd_maurey --epsilon 1 --delta 1e-6 \
	--objective '{"name": "bilinear", "coupling": 0.5}' \
	--constraint '{"kind": "polytope", "vertices": [[0, 0], [1, 0, 2], [0, 1]]}' \
	--constraint-y simplex:scale=1 >"$TMP/poly3.json" 2>"$TMP/err"
check "a ragged vertex list is refused naming the row" \
	sh -c "jq -e '.error.field == \"constraints.x.vertices[1]\"' '$TMP/poly3.json' >/dev/null"
# saddle.smd_bias_reduced on the same pairs and simplices (eps 4: at eps 1
# Theorem 4.3's stopping budget U is below 4 at n = 3000, refused as
# privacy_too_small_for_n): the result is an average of T_run <= steps
# vertices per player (T_run, random and public, is reported after the run
# as params_used.iterations: every entry times T_run is an integer); the
# event counts floor(6 U) draws.
"$BIN" solve --data "$TMP/pairs.csv" --format csv --schema "$TMP/pairs.schema.json" \
	--algorithm saddle.smd_bias_reduced --epsilon 4 --delta 1e-6 \
	--objective '{"name": "bilinear", "coupling": 0.5}' --constraint simplex:scale=1 \
	--constraint-y simplex:scale=1 --eval "$TMP/pairs.csv" >"$TMP/sbr.json" 2>"$TMP/err"
check "smd_bias_reduced solve exits 0" test $? -eq 0
check "smd_bias_reduced x and y are averages of T_run vertices" sh -c "jq -e '.params_used.iterations as \$t
	| \$t >= 1 and \$t <= .steps and .params_used.records_used >= \$t
	and ([.x[], .y[]] | all(. >= 0 and ((. * \$t) - ((. * \$t) | round) | fabs) < 1e-9))' \
	'$TMP/sbr.json' >/dev/null && jq -e '((.x | add) - 1 | fabs) < 1e-12 and ((.y | add) - 1 | fabs) < 1e-12' '$TMP/sbr.json' >/dev/null"
check "smd_bias_reduced charges floor(6 U) draws" sh -c "jq -e '.privacy.event.count == (6 * .params_used.stop_budget | floor) and .params_used.levels >= 1' '$TMP/sbr.json' >/dev/null"
"$BIN" solve --data "$TMP/pairs.csv" --format csv --schema "$TMP/pairs.schema.json" \
	--algorithm saddle.smd_bias_reduced --epsilon 1 --delta 1e-6 \
	--objective '{"name": "bilinear", "coupling": 0.5}' --constraint simplex:scale=1 \
	--constraint-y simplex:scale=1 >"$TMP/sbr_small.json" 2>"$TMP/err"
check "smd_bias_reduced at eps 1 refused as too small" sh -c "test $? -ne 0 && cat '$TMP/sbr_small.json' '$TMP/err' | grep -q privacy_too_small_for_n"
# VI mode: bilinear_vi (an operator objective on one set, u = (x, y) in the
# l2 ball of radius 1.5 of R^4) through the same method with --constraint
# only; x holds u, no y; the weak VI gap recomputed in closed form:
# weak = <mu, u> + R |F(u)|, F(u) = (g y + mu_a, mu_b - g x).
"$BIN" solve $SADDLE --objective '{"name": "bilinear_vi", "coupling": 0.5}' \
	--constraint l2_ball:radius=1.5 --eval "$TMP/pairs.csv" >"$TMP/vi.json" 2>"$TMP/err"
check "vi solve exits 0" test $? -eq 0
check "vi x has 4 entries, no y" sh -c "jq -e '(.x | length == 4) and (has(\"y\") | not)' '$TMP/vi.json' >/dev/null"
jq -r '[.x[], .evaluation.weak_gap.lower, .evaluation.weak_gap.upper] | map(tostring) | join(" ")' \
	"$TMP/vi.json" >"$TMP/vu"
check "vi weak gap recomputed in closed form" sh -c "awk -F, -v u=\"\$(cat '$TMP/vu')\" '
	BEGIN { split(u, v, \" \") }
	{ for (j = 1; j <= 4; j++) m[j] += \$j; n++ }
	END { for (j = 1; j <= 4; j++) m[j] /= n; g = 0.5
		f1 = g * v[3] + m[1]; f2 = g * v[4] + m[2]; f3 = m[3] - g * v[1]; f4 = m[4] - g * v[2]
		gap = m[1] * v[1] + m[2] * v[2] + m[3] * v[3] + m[4] * v[4] \
		    + 1.5 * sqrt(f1^2 + f2^2 + f3^2 + f4^2)
		exit !(v[5] - 1e-9 <= gap && gap <= v[6] + 1e-9) }' '$TMP/pairs.csv'"
# fair_logistic_lagrangian: binary rows of 3 features with the sensitive
# attribute as a group column of 2; x in an l2 ball, the multipliers in the
# box [0, 1]; a y box with lo != 0 names constraints.y.lo.  affine_vi on
# the pairs' 4 columns as b with a monotone 4 x 4 matrix; a non-monotone
# one names objective.matrix.
awk 'BEGIN { srand(3); for (i = 0; i < 2000; i++) { s = (rand() < 0.4);
	a = rand() - 0.5 + 0.2 * s; b = rand() - 0.5; c = rand() - 0.5;
	printf "%.4f,%.4f,%.4f,%d,%d\n", a, b, c, s, (2 * a + b > 0) * 2 - 1 } }' >"$TMP/fair.csv"
echo '{"schema": {"features": 3, "task": "binary", "group": {"groups": 2}}, "bounds": {"feature_l2": 1}}' \
	>"$TMP/fair.schema.json"
FAIR="--data $TMP/fair.csv --format csv --schema $TMP/fair.schema.json --algorithm saddle.sgda_one_pass --epsilon 1 --delta 1e-6"
"$BIN" solve $FAIR --objective '{"name": "fair_logistic_lagrangian", "group_proportions": [0.6, 0.4], "parity_tolerance": 0.05}' \
	--constraint l2_ball:radius=2 --constraint-y box:lo=0,hi=1 --eval "$TMP/fair.csv" >"$TMP/fair.json" 2>"$TMP/err"
check "fair solve exits 0" test $? -eq 0
check "fair x in the ball, y in [0, 1]^2, gap bracket" sh -c "jq -e '(.x | length == 3) and ([.x[] | . * .] | add <= 4 + 1e-9)
	and (.y | length == 2) and all(.y[]; . >= 0 and . <= 1)
	and .evaluation.strong_gap.lower >= -1e-9 and .evaluation.strong_gap.lower <= .evaluation.strong_gap.upper' '$TMP/fair.json' >/dev/null"
check "fair y box with lo != 0 names constraints.y.lo" run_err 1 constraints.y.lo "" -- \
	$FAIR --objective '{"name": "fair_logistic_lagrangian", "group_proportions": [0.6, 0.4]}' \
	--constraint l2_ball:radius=2 --constraint-y box:lo=-1,hi=1
"$BIN" solve $SADDLE --objective '{"name": "affine_vi", "matrix": [[1, 0.5, 0, 0], [-0.5, 1, 0, 0], [0, 0, 0, 1], [0, 0, -1, 0]]}' \
	--constraint l2_ball:radius=1 --eval "$TMP/pairs.csv" >"$TMP/aff.json" 2>"$TMP/err"
check "affine_vi solve exits 0, weak <= strong" sh -c "jq -e '(.x | length == 4) and .evaluation.weak_gap.upper >= -1e-12
	and .evaluation.weak_gap.upper <= .evaluation.strong_gap.upper + 1e-9' '$TMP/aff.json' >/dev/null"
check "affine_vi non-monotone matrix names objective.matrix" run_err 1 objective.matrix "monotone" -- \
	$SADDLE --objective '{"name": "affine_vi", "matrix": [[1, 0, 0, 0], [0, -1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]}' \
	--constraint l2_ball:radius=1
check "vi with --constraint-y names constraints.y" run_err 1 constraints.y "operator" -- \
	$SADDLE --objective bilinear_vi --constraint l2_ball:radius=1 --constraint-y l2_ball:radius=1
check "saddle without --constraint-y names constraints.y" run_err 1 constraints.y "" -- \
	$SADDLE --objective bilinear --constraint l2_ball:radius=1
check "bad --constraint-y names constraints.y" run_err 1 constraints.y "" -- \
	$SADDLE --objective bilinear --constraint l2_ball:radius=1 --constraint-y l2_ball
check "--constraint-y radius names constraints.y.radius" run_err 1 constraints.y.radius "" -- \
	$SADDLE --objective bilinear --constraint l2_ball:radius=1 --constraint-y l2_ball:radius=-1
check "--constraint-y on dp_sgd names constraints.y" run_err 1 constraints.y "not a saddle" -- \
	--data "$DATA" --format csv $COMMON --constraint l2_ball:radius=1 --delta 1e-6 \
	--constraint-y l2_ball:radius=1
check "list: sgda is a saddle method with constraints.y" \
	sh -c "jq -e '.algorithms[] | select(.name == \"saddle.sgda_one_pass\") | .saddle and (.constraints.y | length > 0) and all(.objectives[]; .kind == \"saddle\" or .kind == \"operator\")' '$TMP/list.json' >/dev/null"

# mirror_descent.noisy on the l1 ball: a point inside it, the documented event, charged as asked.
"$BIN" solve --data "$DATA" --format csv --schema "$SCHEMA" --algorithm mirror_descent.noisy \
	--objective logistic --constraint l1_ball:radius=2 --epsilon 1 --delta 1e-6 \
	>"$TMP/md.json" 2>"$TMP/md.err"
check "mirror_descent.noisy solves" test $? -eq 0
check "mirror_descent.noisy: x in the l1 ball, whole-data self_composed event, charged 1" \
	sh -c "jq -e '(.x | map(fabs) | add) <= 2 * (1 + 1e-12) and .privacy.event.type == \"self_composed\" and .privacy.charged.epsilon == 1 and .params_used.batch_size == 20000' '$TMP/md.json' >/dev/null"

# synthetic.smd_queries on categorical rows (no objective, no constraint): 400 rows over a
# universe of 12, and its max 2-way marginal error on the same file as --eval, in [0, 1].
cat >"$TMP/cat.schema.json" <<'EOS'
{"schema": {"features": 0, "task": "unlabeled", "categorical": [
  {"name": "colour", "labels": ["red", "green", "blue"]}, {"name": "size", "size": 4}]},
 "bounds": {}}
EOS
awk 'BEGIN { split("red green blue", c, " "); for (i = 0; i < 400; i++)
	printf "%s,%d\n", c[1 + i % 3], (i * 7) % 4 }' >"$TMP/cat.csv"
"$BIN" solve --data "$TMP/cat.csv" --format csv --schema "$TMP/cat.schema.json" \
	--algorithm synthetic.smd_queries --epsilon 1 --delta 1e-6 --eval "$TMP/cat.csv" \
	>"$TMP/syn.json" 2>"$TMP/syn.err"
check "synthetic.smd_queries solves" test $? -eq 0
check "synthetic.smd_queries: 400 rows over 12, zcdp, max_query_error in [0, 1]" \
	sh -c "jq -e '.synthetic.rows == 400 and .synthetic.universe == 12 and ([.synthetic.cells[][1]] | add) == 400 and .privacy.event.type == \"zcdp\" and .evaluation.max_query_error >= 0 and .evaluation.max_query_error <= 1 and .evaluation.queries == 24' '$TMP/syn.json' >/dev/null"
"$BIN" solve --data "$TMP/cat.csv" --format csv --schema "$TMP/cat.schema.json" \
	--algorithm synthetic.smd_queries --objective logistic --epsilon 1 --delta 1e-6 \
	>/dev/null 2>"$TMP/syn.err"
check "synthetic.smd_queries refuses an objective" sh -c "test $? -ne 0 && grep -q objective '$TMP/syn.err'"

# The zeroth-order methods on the demo rows with the ramp loss (function
# values only): o2nc_tree's event is one gaussian with z = 1 / rho_eff, and
# params_used carries rho_paper and rho_zcdp = rho_paper^2 / 2; naive's is
# parallel gaussians; the evaluation's loss is a ramp loss, in [0, 1].
for ZA in zeroth_order.o2nc_tree zeroth_order.naive; do
	"$BIN" solve --data "$DATA" --format csv --schema "$SCHEMA" --algorithm $ZA \
		--objective ramp_classification --constraint l2_ball:radius=10 --epsilon 1 \
		--delta 1e-6 --params '{"gold_delta": 0.1}' --eval "$DATA" >"$TMP/zo.json" 2>"$TMP/err"
	check "$ZA solves" test $? -eq 0
	check "$ZA: 10 coordinates, ramp loss in [0, 1], rho_zcdp = rho_paper^2 / 2" \
		sh -c "jq -e '(.x | length == 10) and .evaluation.loss >= 0 and .evaluation.loss <= 1 and ((.params_used.rho_zcdp - .params_used.rho_paper * .params_used.rho_paper / 2) | fabs) < 1e-12' '$TMP/zo.json' >/dev/null"
done
check "zeroth_order.naive: parallel gaussians" \
	sh -c "jq -e '.privacy.event.type == \"parallel\"' '$TMP/zo.json' >/dev/null"
# relu_net (one hidden layer, width 2, from its public start of
# objective.init_seed) on the demo rows read as regression (labels +-1 are
# real numbers): (10 + 1) * 2 coordinates and an evaluation loss in [0, 1];
# a missing width is refused naming objective.width.
jq '.schema.task = "regression" | .bounds.label = 1' "$SCHEMA" >"$TMP/reg.schema.json"
for ZA in zeroth_order.o2nc_tree zeroth_order.naive; do
	"$BIN" solve --data "$DATA" --format csv --schema "$TMP/reg.schema.json" --algorithm $ZA \
		--objective '{"name": "relu_net", "width": 2, "intercept": true}' \
		--constraint l2_ball:radius=10 --epsilon 1 --delta 1e-6 --eval "$DATA" \
		>"$TMP/net.json" 2>"$TMP/err"
	check "$ZA solves relu_net" test $? -eq 0
	check "$ZA relu_net: 22 coordinates, loss in [0, 1]" \
		sh -c "jq -e '(.x | length == 22) and .evaluation.loss >= 0 and .evaluation.loss <= 1' '$TMP/net.json' >/dev/null"
done
check "relu_net without a width is refused naming objective.width" run_err 1 objective.width "" -- \
	--data "$DATA" --format csv --schema "$TMP/reg.schema.json" --algorithm zeroth_order.naive \
	--objective relu_net --constraint l2_ball:radius=10 --epsilon 1 --delta 1e-6
"$BIN" solve --data "$DATA" --format csv --schema "$SCHEMA" --algorithm zeroth_order.o2nc_tree \
	--objective logistic --constraint l2_ball:radius=10 --epsilon 1 --delta 1e-6 \
	>/dev/null 2>"$TMP/zo.err"
check "zeroth_order.o2nc_tree refuses a gradient objective" \
	sh -c "test $? -ne 0 && grep -q objective '$TMP/zo.err'"

[ "$fails" -eq 0 ] && echo "solve: all checks passed"
exit "$fails"
