#!/bin/sh
# citations.sh SRC: the repository stands on its own.  No tracked file may
# cite a document outside it: the shared privacy rules, the algorithm
# specs, the seed papers' folder or the house-style note of the workspace
# it was written in, in any case ("Spec 002" too).  Cite the
# in-repository text instead: the privacy model is docs/privacy-model.md (cite "docs/privacy-model.md §N"), the
# algorithm notes are indexed in docs/algorithms/README.md, and papers are
# cited by author, year and title.
set -u
cd "$1" || exit 1
pattern='\.\./shared|/shared/(specs|privacy|seeds|style)|ACCOUNTING\.md|ACCOUNTING (§|section|[0-9])'
pattern="$pattern"'|specs/0[0-9][0-9]|HOUSE-STYLE|\bspecs? 0[0-9][0-9]\b|\bseeds? 0[0-9][0-9]\b'
list() {
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git ls-files -z
	else
		find . -path ./build -prune -o -path ./var -prune -o -path ./.git -prune -o -type f \
			-print0
	fi
}
# This file names the patterns; it is the one file allowed to.  The
# matches are collected, not read from grep's status: xargs may run grep
# several times, and its status is the worst of them.
hits=$(list | grep -zv '^\(\./\)\{0,1\}tests/lint/citations\.sh$' |
	xargs -0 grep -inIsE "$pattern" -- /dev/null)
if [ -n "$hits" ]; then
	printf '%s\n' "$hits"
	echo "citations: the lines above cite a document outside the repository;" \
		"cite docs/privacy-model.md or docs/algorithms/ instead"
	exit 1
fi
echo "citations: ok"
