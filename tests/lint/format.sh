#!/bin/sh
# format.sh SRC: clang-format is the authority on layout (.clang-format);
# every tracked C file must be formatted.
set -u
cd "$1" || exit 1
files=$(git ls-files '*.c' '*.h' 2>/dev/null)
[ -n "$files" ] || files=$(find common algorithms service tests bench -name '*.[ch]')
# shellcheck disable=SC2086
if clang-format --dry-run --Werror $files; then
	echo "format: ok"
else
	echo "format: run clang-format -i on the files above"
	exit 1
fi
