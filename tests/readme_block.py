#!/usr/bin/env python3
"""readme_block.py README URL EXPECT: the README's curl examples as one script.

Prints, on stdout, every ```sh block of README that runs curl, in order,
with the service address http://127.0.0.1:8080 replaced by URL and every
curl command replaced by `rcurl N` (tests/readme.sh defines rcurl: it runs
curl, prints the body as curl would, and checks the status).  EXPECT gets
one line per curl, "N LINE STATUS...": the README line it is on and the
statuses the comment that ends its command names (a comment starting with
three-digit codes, e.g. `# 201 {"id": ...}` or `# 200 ..., 202 ..., 409
...`); no STATUS means any 2xx.  Codes are read up to the first '{' of the
comment, so the JSON shown after them does not count.
"""
import re
import sys

DEFAULT_URL = "http://127.0.0.1:8080"
STATUS = re.compile(r"(?<![\w.:])([1-5][0-9][0-9])(?![\w.])")


def blocks(text):
    """(first line number, lines) of each ```sh block that runs curl."""
    out, cur, start = [], None, 0
    for n, line in enumerate(text.split("\n"), 1):
        if cur is None and line.strip() == "```sh":
            cur, start = [], n + 1
        elif cur is not None and line.strip() == "```":
            if any(re.search(r"(^|[\s;(|&])curl\s", l) for l in cur):
                out.append((start, cur))
            cur = None
        elif cur is not None:
            cur.append(line)
    return out


def scan(line, quote):
    """Split a line into (code with curl replaced by a marker, comment,
    quote state at its end, curl count).  quote: None, "'" or '"'."""
    code, i, n, curls = [], 0, len(line), 0
    while i < n:
        c = line[i]
        if quote == "'":
            code.append(c)
            if c == "'":
                quote = None
            i += 1
            continue
        if quote == '"':
            code.append(c)
            if c == "\\" and i + 1 < n:
                code.append(line[i + 1])
                i += 2
                continue
            if c == '"':
                quote = None
            i += 1
            continue
        if c in "'\"":
            quote = c
            code.append(c)
            i += 1
            continue
        if c == "\\" and i + 1 < n:
            code.append(line[i:i + 2])
            i += 2
            continue
        if c == "#" and (i == 0 or line[i - 1] in " \t;"):
            return "".join(code), line[i:], quote, curls
        prev = line[i - 1] if i > 0 else " "
        if line.startswith("curl", i) and prev in " \t;(|&" and \
                (i + 4 == n or line[i + 4] in " \t"):
            code.append("\0CURL\0")
            curls += 1
            i += 4
            continue
        code.append(c)
        i += 1
    return "".join(code), "", quote, curls


def main(argv):
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    readme, url, expect_path = argv[1:]
    with open(readme, encoding="utf-8") as f:
        found = blocks(f.read())
    if not found:
        print("readme_block: no sh block with curl in %s" % readme, file=sys.stderr)
        return 1
    out, expect, next_id = [], [], 1
    for start, lines in found:
        quote, heredoc, pending = None, None, []  # pending: (id, line) of the open command
        for k, line in enumerate(lines):
            lineno = start + k
            if heredoc is not None:
                out.append(line)
                if line == heredoc:
                    heredoc = None
                continue
            code, comment, quote, curls = scan(line, quote)
            for _ in range(curls):
                code = code.replace("\0CURL\0", "rcurl %d" % next_id, 1)
                pending.append((next_id, lineno))
                next_id += 1
            m = re.search(r"<<-?\s*'?([A-Za-z_]+)'?", code)
            if m and quote is None:
                heredoc = m.group(1)
            out.append((code + comment).replace(DEFAULT_URL, url))
            if quote is None and not code.rstrip().endswith("\\"):
                codes = STATUS.findall(comment.split("{", 1)[0]) if comment else []
                for cid, cline in pending:
                    expect.append("%d %d %s" % (cid, cline, " ".join(codes)))
                pending = []
        if quote is not None or heredoc is not None or pending:
            print("readme_block: block at line %d ends inside a quote, heredoc or command"
                  % start, file=sys.stderr)
            return 1
        out.append("")
    with open(expect_path, "w", encoding="utf-8") as f:
        f.write("\n".join(expect) + "\n")
    sys.stdout.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
