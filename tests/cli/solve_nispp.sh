#!/bin/sh
# solve_nispp.sh DPOPTD SRC: `dpoptd solve` runs saddle.nispp
# (docs/algorithms/nispp.md) on bilinear pairs (a, b), the two blocks of an
# unlabeled schema, over unit l2 balls: single_pass with B = round(n^(1/3))
# = 14, N = floor(n / B) = 214 and its event parallel(gaussian) over N
# parts, x and y in their balls, the gap on the evaluation file recomputed
# in closed form, no inner count or certificate anywhere in the output;
# multi_pass on 150 rows with N = n and the event
# self_composed(sampled_without_replacement(150, 12, gaussian), 150); VI
# mode with the operator-extrapolation solver; the vacuous regime refused
# as privacy_too_small_for_n naming privacy.epsilon; --list names it.
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
rows 3000 7 >"$TMP/pairs.csv"
rows 150 9 >"$TMP/small.csv"
run() { # run DATA EXTRA...
	data=$1
	shift
	"$BIN" solve --data "$data" --format csv --schema "$TMP/pairs.schema.json" \
		--algorithm saddle.nispp --delta 1e-6 "$@"
}
BIL='{"name": "bilinear", "coupling": 0.5}'

run "$TMP/pairs.csv" --epsilon 1 --objective "$BIL" --constraint l2_ball:radius=1 \
	--constraint-y l2_ball:radius=1 --eval "$TMP/pairs.csv" >"$TMP/sp.json" 2>"$TMP/err"
check "single_pass exits 0" test $? -eq 0
check "single_pass: x, y in the unit balls" \
	sh -c "jq -e '(.x | length == 2) and (.y | length == 2) and ([.x[] | . * .] | add) <= 1 + 1e-9 and ([.y[] | . * .] | add) <= 1 + 1e-9' '$TMP/sp.json' >/dev/null"
check "single_pass: B = 14, N = 214, parallel(gaussian) over N parts" \
	sh -c "jq -e '.params_used.batch_size == 14 and .steps == 214 and .privacy.event.type == \"parallel\" and .privacy.event.parts == .steps and .privacy.event.events[0].type == \"gaussian\"' '$TMP/sp.json' >/dev/null"
check "single_pass: no inner count or certificate in the output" \
	sh -c "! grep -Eiq 'certificate|inner_iter|inner_count' '$TMP/sp.json'"
jq -r '[.x[], .y[], .evaluation.strong_gap.lower, .evaluation.strong_gap.upper] | map(tostring) | join(" ")' \
	"$TMP/sp.json" >"$TMP/u"
check "single_pass gap recomputed in closed form" sh -c "awk -F, -v u=\"\$(cat '$TMP/u')\" '
	BEGIN { split(u, v, \" \") }
	{ for (j = 1; j <= 4; j++) m[j] += \$j; n++ }
	END { for (j = 1; j <= 4; j++) m[j] /= n; g = 0.5
		gap = m[1] * v[1] + m[2] * v[2] + sqrt((g * v[1] - m[3])^2 + (g * v[2] - m[4])^2) \\
		    + m[3] * v[3] + m[4] * v[4] + sqrt((g * v[3] + m[1])^2 + (g * v[4] + m[2])^2)
		exit !(v[5] - 1e-9 <= gap && gap <= v[6] + 1e-9) }' '$TMP/pairs.csv'"

run "$TMP/small.csv" --epsilon 1 --objective "$BIL" --constraint l2_ball:radius=1 \
	--constraint-y l2_ball:radius=1 --params '{"variant": "multi_pass"}' >"$TMP/mp.json" 2>"$TMP/err"
check "multi_pass exits 0" test $? -eq 0
check "multi_pass: N = n, self_composed(sampled_without_replacement(150, 12, gaussian), N)" \
	sh -c "jq -e '.steps == 150 and .privacy.event.type == \"self_composed\" and .privacy.event.count == 150 and .privacy.event.event.type == \"sampled_without_replacement\" and .privacy.event.event.n == 150 and .privacy.event.event.batch == 12 and .privacy.event.event.event.type == \"gaussian\"' '$TMP/mp.json' >/dev/null"
check "multi_pass: x, y in the unit balls" \
	sh -c "jq -e '([.x[] | . * .] | add) <= 1 + 1e-9 and ([.y[] | . * .] | add) <= 1 + 1e-9' '$TMP/mp.json' >/dev/null"

run "$TMP/pairs.csv" --epsilon 1 --objective '{"name": "bilinear_vi", "coupling": 0.5}' \
	--constraint l2_ball:radius=1.5 --params '{"inner_solver": "operator_extrapolation"}' \
	>"$TMP/vi.json" 2>"$TMP/err"
check "VI mode (operator extrapolation): x holds u (4 entries) in the ball, no y" \
	sh -c "jq -e '(.x | length == 4) and (has(\"y\") | not) and ([.x[] | . * .] | add) <= 2.25 + 1e-9' '$TMP/vi.json' >/dev/null"

run "$TMP/small.csv" --epsilon 0.01 --objective "$BIL" --constraint l2_ball:radius=1 \
	--constraint-y l2_ball:radius=1 >/dev/null 2>"$TMP/err"
st=$?
check "vacuous regime refused: privacy_too_small_for_n naming privacy.epsilon" \
	sh -c "test $st -ne 0 && jq -e '.error.code == \"privacy_too_small_for_n\" and .error.field == \"privacy.epsilon\"' '$TMP/err' >/dev/null"

"$BIN" solve --list >"$TMP/list.json" 2>"$TMP/err"
check "list: nispp is a saddle method with its two variants and three solver choices" \
	sh -c "jq -e '.algorithms[] | select(.name == \"saddle.nispp\") | .saddle and (.params[] | select(.name == \"variant\") | .choices == [\"single_pass\", \"multi_pass\"]) and (.params[] | select(.name == \"inner_solver\") | .choices == [\"auto\", \"fixed_point\", \"operator_extrapolation\"])' '$TMP/list.json' >/dev/null"

[ "$fails" -eq 0 ] && echo "solve_nispp: all checks passed"
exit "$fails"
