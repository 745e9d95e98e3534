#!/bin/sh
# symbols.sh NM FILE... : the retired continuous floating-point Gaussian
# privacy sampler (Marsaglia's polar method, once noise_add_gaussian() in
# algorithms/privacy/noise.c) is in no library or program of the build;
# the tests keep it in tests/support/polar_gaussian.c (issue 9).  Checks
# the symbol table of each FILE (dpoptd, libalg.a, libcommon.a); a file
# nm cannot read, or that defines no function (stripped), fails rather
# than passing unseen.
set -u
NM=$1
shift
fail=0
for f in "$@"; do
	if ! syms=$("$NM" "$f" 2>/dev/null) || ! printf '%s\n' "$syms" | grep -qE ' [Tt] '; then
		echo "symbols: cannot read the functions of $f"
		fail=1
		continue
	fi
	# any line naming it: defined (T, t) or only referenced (U)
	if printf '%s\n' "$syms" | grep -E '\b(noise_add_gaussian|polar_add_gaussian|polar_pair)\b'; then
		echo "symbols: $f contains the test-only polar Gaussian sampler"
		fail=1
	fi
done
[ $fail = 0 ] && echo "symbols: ok ($# files)"
exit $fail
