#!/usr/bin/env python3
"""timeouts_check.py BUILD_DIR TESTS_README SCALE SANITIZED

Every meson test's timeout (BUILD_DIR/meson-info/intro-tests.json) times
SCALE (the build's test_timeout_scale) must be at least 10 x the CPU time
measured for it in the table of TESTS_README (tests/README.md): the
debugoptimized column, or the ASan+UBSan one when SANITIZED is "true".
A test without a row, or without a figure for this build, is reported and
skipped (measure it and add the row).  Exit 1 on any timeout below that.
"""
import json
import os
import sys

MARGIN = 10.0


def table(path):
    """{test: (cpu_opt or None, cpu_asan or None)} from the README's table."""
    rows = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) < 7 or not cells[0].startswith("`"):
                continue

            def num(s):
                try:
                    return float(s)
                except ValueError:
                    return None

            rows[cells[0].strip("`")] = (num(cells[2]), num(cells[4]))
    return rows


def main(argv):
    if len(argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    build, readme, scale, sanitized = argv[1], argv[2], float(argv[3]), argv[4] == "true"
    with open(os.path.join(build, "meson-info", "intro-tests.json"), encoding="utf-8") as f:
        tests = json.load(f)
    measured = table(readme)
    bad = 0
    for t in tests:
        name, timeout = t["name"], float(t["timeout"] or 0)
        row = measured.get(name)
        cpu = None if row is None else row[1 if sanitized else 0]
        if cpu is None:
            print("note: %s has no measured CPU time for this build in %s" % (name, readme))
            continue
        limit = timeout * scale
        if timeout <= 0 or limit < MARGIN * cpu:
            print("FAIL %s: timeout %g s x scale %g = %g s, below %g x its CPU time %.2f s" % (
                name, timeout, scale, limit, MARGIN, cpu))
            bad += 1
        else:
            print("ok   %s: %g s >= %g x %.2f s" % (name, limit, MARGIN, cpu))
    print("%d tests, %d timeouts below %g x their CPU time" % (len(tests), bad, MARGIN))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
