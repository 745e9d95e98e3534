#!/bin/sh
# run.sh: build the libFuzzer targets with clang and run each one for
# FUZZ_SECONDS (default 20) over a scratch copy of its checked-in corpus
# (tests/fuzz/corpus/<target>/).  Fails on a build error or on any crash,
# leak, sanitizer report or invariant abort; the reproducer is left in
# FUZZ_OUT (default build/fuzz, git-ignored).
#
# A direct clang command line rather than a meson build: the targets need
# a handful of source files, not the service's dependencies, and the
# sanitizer flags must not reach the rest of the tree.
set -eu

SRC=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${FUZZ_OUT:-$SRC/build/fuzz}
SECONDS_EACH=${FUZZ_SECONDS:-20}
CLANG=${FUZZ_CC:-clang}

if ! command -v "$CLANG" >/dev/null 2>&1; then
	echo "fuzz: $CLANG not found (scripts/lib/deps.sh installs clang)" >&2
	exit 1
fi
mkdir -p "$OUT"

CFLAGS="-std=c11 -D_POSIX_C_SOURCE=200809L -g -O1 -fno-omit-frame-pointer
-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
-Wall -Wextra -Werror -Wno-unused-parameter
-I$SRC/common -I$SRC/algorithms -I$SRC/service -I$SRC/tests/fuzz"
JANSSON=$(pkg-config --cflags --libs jansson)

build() { # build TARGET SOURCES...
	t=$1
	shift
	echo "fuzz: building $t"
	# shellcheck disable=SC2086
	"$CLANG" $CFLAGS -o "$OUT/$t" "$SRC/tests/fuzz/$t.c" "$@" -lm
}
build fuzz_csv "$SRC/common/csv.c" "$SRC/common/lines.c" "$SRC/common/decimal.c" "$SRC/common/err.c"
build fuzz_libsvm "$SRC/common/libsvm.c" "$SRC/common/lines.c" "$SRC/common/decimal.c" "$SRC/common/err.c"
build fuzz_decimal "$SRC/common/decimal.c"
# (algorithms/data.c: schema_feature_range, which schema.c's bounds use)
# shellcheck disable=SC2086
build fuzz_schema "$SRC/service/schema.c" "$SRC/service/jv.c" "$SRC/algorithms/data.c" \
	"$SRC/common/decimal.c" "$SRC/common/err.c" $JANSSON

fail=0
for t in fuzz_csv fuzz_libsvm fuzz_decimal fuzz_schema; do
	work=$(mktemp -d)
	cp "$SRC/tests/fuzz/corpus/$t/"* "$work/"
	log="$OUT/$t.log"
	echo "fuzz: running $t for ${SECONDS_EACH}s"
	if UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		"$OUT/$t" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
		-max_len=4096 -print_final_stats=1 -artifact_prefix="$OUT/$t-" \
		"$work" >"$log" 2>&1; then
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
		echo "fuzz: $t ok, ${runs:-?} executions"
	else
		echo "fuzz: $t FAILED (log: $log)"
		tail -40 "$log"
		fail=1
	fi
	rm -rf "$work"
done
exit $fail
