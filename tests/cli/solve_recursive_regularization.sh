#!/bin/sh
# solve_recursive_regularization.sh DPOPTD SRC: `dpoptd solve` runs
# saddle.recursive_regularization (docs/algorithms/recursive-regularization.md)
# on bilinear pairs (a, b), the two blocks of an unlabeled schema, over unit
# l2 balls, n = 4096 (n' = 341, T = 4 at (1, 1e-6)): the default variant
# (auto) chooses outpert_cert (params_used.variant 1); sgda with b = 17, K =
# 20 and the event parallel(gaussian) over T K = 80 parts, x and y in their
# balls and the gap on the evaluation file recomputed in closed form;
# outpert_cert with the event parallel(gaussian) over the T = 4 rounds and
# extragradient_iterations 625; a box and a simplex player; the theory
# multiplier 48 refused as privacy_too_small_for_n naming privacy.epsilon;
# --list names it with its three variants and auto.
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
: "$SRC"
cat >"$TMP/pairs.schema.json" <<'EOS'
{"schema": {"features": 4, "task": "unlabeled", "blocks": [
  {"name": "a", "size": 2, "bounds": {"l2": 1}}, {"name": "b", "size": 2, "bounds": {"l2": 1}}]},
 "bounds": {"feature_l2": 1.5}}
EOS
rows() { # rows N SEED: entries +-0.7, a_1 mostly +, b_2 mostly -
	awk -v n="$1" -v s="$2" 'BEGIN { for (i = 0; i < n; i++) { line = ""
		for (j = 1; j <= 4; j++) { s = (s * 1103515245 + 12345) % 2147483648
			p = (j == 1 ? 0.8 : j == 4 ? 0.25 : 0.5)
			line = line (j > 1 ? "," : "") (s / 2147483648 < p ? "0.7" : "-0.7") }
		print line } }'
}
rows 4096 7 >"$TMP/pairs.csv"
run() { # run DATA EXTRA...
	data=$1
	shift
	"$BIN" solve --data "$data" --format csv --schema "$TMP/pairs.schema.json" \
		--algorithm saddle.recursive_regularization --delta 1e-6 --mode basic "$@"
}
BIL='{"name": "bilinear", "coupling": 0.5}'

run "$TMP/pairs.csv" --epsilon 1 --objective "$BIL" --constraint l2_ball:radius=1 \
	--constraint-y l2_ball:radius=1 >"$TMP/def.json" 2>"$TMP/err"
check "default (auto) exits 0" test $? -eq 0
check "default (auto): chose outpert_cert (params_used.variant 1), T = 4, 625 extragradient iterations" \
	sh -c "jq -e '.params_used.variant == 1 and .steps == 4 and .privacy.event.parts == 4 and .params_used.extragradient_iterations == 625' '$TMP/def.json' >/dev/null"

run "$TMP/pairs.csv" --epsilon 1 --objective "$BIL" --constraint l2_ball:radius=1 \
	--constraint-y l2_ball:radius=1 --params '{"variant": "sgda"}' --eval "$TMP/pairs.csv" \
	>"$TMP/sg.json" 2>"$TMP/err"
check "sgda exits 0" test $? -eq 0
check "sgda: x, y in the unit balls" \
	sh -c "jq -e '(.x | length == 2) and (.y | length == 2) and ([.x[] | . * .] | add) <= 1 + 1e-9 and ([.y[] | . * .] | add) <= 1 + 1e-9' '$TMP/sg.json' >/dev/null"
check "sgda: n' = 341, T = 4, b = 17, K = 20, parallel(gaussian) over T K = 80 parts" \
	sh -c "jq -e '.params_used.chunk_size == 341 and .params_used.rounds == 4 and .params_used.batch_size == 17 and .params_used.round_steps == 20 and .steps == 80 and .privacy.event.type == \"parallel\" and .privacy.event.parts == 80 and .privacy.event.events[0].type == \"gaussian\"' '$TMP/sg.json' >/dev/null"
jq -r '[.x[], .y[], .evaluation.strong_gap.lower, .evaluation.strong_gap.upper] | map(tostring) | join(" ")' \
	"$TMP/sg.json" >"$TMP/u"
check "sgda gap recomputed in closed form" sh -c "awk -F, -v u=\"\$(cat '$TMP/u')\" '
	BEGIN { split(u, v, \" \") }
	{ for (j = 1; j <= 4; j++) m[j] += \$j; n++ }
	END { for (j = 1; j <= 4; j++) m[j] /= n; g = 0.5
		gap = m[1] * v[1] + m[2] * v[2] + sqrt((g * v[1] - m[3])^2 + (g * v[2] - m[4])^2) \\
		    + m[3] * v[3] + m[4] * v[4] + sqrt((g * v[3] + m[1])^2 + (g * v[4] + m[2])^2)
		exit !(v[5] - 1e-9 <= gap && gap <= v[6] + 1e-9) }' '$TMP/pairs.csv'"

run "$TMP/pairs.csv" --epsilon 1 --objective "$BIL" --constraint l2_ball:radius=1 \
	--constraint-y l2_ball:radius=1 --params '{"variant": "outpert_cert"}' >"$TMP/op.json" 2>"$TMP/err"
check "outpert_cert exits 0" test $? -eq 0
check "outpert_cert: parallel(gaussian) over T = 4 rounds, 625 extragradient iterations" \
	sh -c "jq -e '.steps == 4 and .privacy.event.type == \"parallel\" and .privacy.event.parts == 4 and .params_used.extragradient_iterations == 625' '$TMP/op.json' >/dev/null"
check "outpert_cert: x, y in the unit balls" \
	sh -c "jq -e '([.x[] | . * .] | add) <= 1 + 1e-9 and ([.y[] | . * .] | add) <= 1 + 1e-9' '$TMP/op.json' >/dev/null"

run "$TMP/pairs.csv" --epsilon 1 --objective "$BIL" --constraint box:lo=-0.5,hi=0.5 \
	--constraint-y simplex:radius=1 >"$TMP/bs.json" 2>"$TMP/err"
check "box x simplex: x in the box, y on the simplex" \
	sh -c "jq -e '([.x[] | . >= -0.5 - 1e-12 and . <= 0.5 + 1e-12] | all) and ([.y[] | . >= -1e-12] | all) and ((.y | add) - 1 | fabs) < 1e-9' '$TMP/bs.json' >/dev/null"

run "$TMP/pairs.csv" --epsilon 1 --objective "$BIL" --constraint l2_ball:radius=1 \
	--constraint-y l2_ball:radius=1 --params '{"regularization_multiplier": 48}' >/dev/null 2>"$TMP/err"
st=$?
check "theory multiplier at n = 4096 refused: privacy_too_small_for_n naming privacy.epsilon" \
	sh -c "test $st -ne 0 && jq -e '.error.code == \"privacy_too_small_for_n\" and .error.field == \"privacy.epsilon\"' '$TMP/err' >/dev/null"

"$BIN" solve --list >"$TMP/list.json" 2>"$TMP/err"
check "list: a saddle method with its three variants and auto" \
	sh -c "jq -e '.algorithms[] | select(.name == \"saddle.recursive_regularization\") | .saddle and (.params[] | select(.name == \"variant\") | .choices == [\"sgda\", \"outpert_cert\", \"sgda_multi_pass\", \"auto\"])' '$TMP/list.json' >/dev/null"

[ "$fails" -eq 0 ] && echo "solve_recursive_regularization: all checks passed"
exit "$fails"
