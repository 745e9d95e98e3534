#!/usr/bin/env python3
"""contract_check.py - real responses against api/openapi.yaml.

    contract_check.py OPENAPI_YAML RECORD_DIR   validate every record
    contract_check.py OPENAPI_YAML --self-test   show that bad records fail

The integration harness (tests/integration/harness.c), run with
DPOPT_TEST_CONTRACT_DIR=RECORD_DIR, writes one JSON line per response it
received: {"method", "path", "status", "content_type", "body"}.  Each record
is checked against the contract:

- the path (query string dropped) matches one of `paths:` (a `{name}`
  segment matches one path segment; a literal path wins over a template);
  an unknown path may only get 404 with the error shape (the contract's
  "statuses that any request can get");
- the method is one of the path's operations, or the status is 405 with
  `#/components/responses/MethodNotAllowed`;
- the status is one of the operation's `responses` (exact code, `4XX`
  style range, or `default`);
- a declared body: the Content-Type's media type (parameters dropped) is
  one of its `content` types, and a JSON body parses and validates against
  that type's schema (JSON Schema 2020-12, the dialect of OpenAPI 3.1;
  `$ref`s resolve inside the whole document);
- no declared content: the body is empty.

A status any route may answer (the contract's top-level
`x-any-route-responses`, status -> response, e.g. a rate limit's 429) is
accepted on every path and method, known or not, with its own body.

New paths and operations need no change here.  Exits 1 listing every
mismatch (at most 5 per operation and status, with a count), 0 when all
records conform; an empty RECORD_DIR is a failure (nothing was checked).
Needs Debian's python3-yaml and python3-jsonschema (scripts/lib/deps.sh).
"""
import collections
import glob
import json
import os
import re
import sys

import jsonschema
import yaml

DIALECT = "https://json-schema.org/draft/2020-12/schema"
METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")


class Contract:
    def __init__(self, doc):
        self.doc = doc
        self.paths = []  # (regex, template, path item), literal paths first
        for template, item in doc.get("paths", {}).items():
            parts = re.split(r"(\{[^}/]+\})", template)
            rx = "".join("[^/]+" if p.startswith("{") else re.escape(p) for p in parts)
            self.paths.append((re.compile("^" + rx + "$"), template, item))
        self.paths.sort(key=lambda t: t[1].count("{"))
        self.any_route = {str(k): v for k, v in doc.get("x-any-route-responses", {}).items()}
        self.validators = {}

    def resolve(self, obj):
        """Follow a local $ref (responses, schemas) to its object."""
        seen = 0
        while isinstance(obj, dict) and "$ref" in obj and len(obj) == 1:
            ref = obj["$ref"]
            if not ref.startswith("#/"):
                raise ValueError("non-local $ref %s" % ref)
            obj = self.doc
            for part in ref[2:].split("/"):
                obj = obj[part.replace("~1", "/").replace("~0", "~")]
            seen += 1
            if seen > 32:
                raise ValueError("$ref loop at %s" % ref)
        return obj

    def validator(self, key, schema):
        """A 2020-12 validator whose root is the whole document, so every
        '#/components/...' reference resolves, with `schema` as its rule."""
        v = self.validators.get(key)
        if v is None:
            root = {"$schema": DIALECT, "components": self.doc.get("components", {}),
                    "allOf": [schema]}
            cls = jsonschema.Draft202012Validator
            cls.check_schema(root)
            v = cls(root)
            self.validators[key] = v
        return v

    def match(self, path):
        for rx, template, item in self.paths:
            if rx.match(path):
                return template, item
        return None, None

    def check(self, rec):
        """Mismatches of one record: a list of (operation key, message)."""
        method = rec["method"].lower()
        path = rec["path"].split("?", 1)[0].split("#", 1)[0]
        status = rec["status"]
        template, item = self.match(path)
        if str(status) in self.any_route:
            op_key = "%s %s" % (rec["method"], template or "<unknown path>")
            return self.check_body(op_key, rec, self.resolve(self.any_route[str(status)]), status)
        if template is None:
            op_key = "%s <unknown path>" % rec["method"]
            if status != 404:
                return [(op_key, "status %d on an unknown path %s (only 404)" % (status, path))]
            return self.check_body(op_key, rec, {"content": {"application/json": {
                "schema": {"$ref": "#/components/schemas/NotFoundError"}}}}, status)
        op_key = "%s %s" % (rec["method"], template)
        op = item.get(method) if method in METHODS else None
        if op is None:
            if status != 405:
                return [(op_key, "status %d for a method the path does not have" % status)]
            return self.check_body(op_key, rec, self.resolve(
                {"$ref": "#/components/responses/MethodNotAllowed"}), status)
        responses = op.get("responses", {})
        resp = responses.get(str(status))
        if resp is None:
            resp = responses.get("%dXX" % (status // 100), responses.get("default"))
        if resp is None:
            return [(op_key, "status %d is not among its responses (%s): %s" % (
                status, ", ".join(sorted(responses)), short(rec.get("body"))))]
        return self.check_body(op_key, rec, self.resolve(resp), status)

    def check_body(self, op_key, rec, resp, status):
        body = rec.get("body")
        content = resp.get("content")
        where = "%s -> %d" % (op_key, status)
        if not content:
            if body:
                return [(op_key, "%d declares no body, got %s" % (status, short(body)))]
            return []
        media = (rec.get("content_type") or "").split(";", 1)[0].strip().lower()
        declared = {k.split(";", 1)[0].strip().lower(): v for k, v in content.items()}
        if media not in declared:
            return [(op_key, "%d: Content-Type '%s' not among %s: %s" % (
                status, rec.get("content_type"), sorted(declared), short(body)))]
        if body is None:
            return [(op_key, "%d: the body is not UTF-8" % status)]
        schema = declared[media].get("schema")
        if schema is None:
            return []
        if media == "application/json" or media.endswith("+json"):
            try:
                value = json.loads(body)
            except ValueError as ex:
                return [(op_key, "%d: not JSON (%s): %s" % (status, ex, short(body)))]
        else:
            value = body
        errors = sorted(self.validator(where + " " + media, schema).iter_errors(value),
                        key=lambda e: list(e.absolute_path))
        return [(op_key, "%d: %s at /%s: %s" % (
            status, best(e), "/".join(str(p) for p in e.absolute_path), short(body)))
            for e in errors[:3]]


def best(err):
    """The most specific message of an error (oneOf/anyOf name their branches)."""
    if err.context:
        deepest = max(err.context, key=lambda e: len(e.absolute_path))
        return "%s (in a branch: %s at /%s)" % (err.message[:200], deepest.message[:200],
                                                 "/".join(str(p) for p in deepest.absolute_path))
    return err.message[:300]


def short(body):
    if body is None:
        return "<none>"
    return body if len(body) <= 300 else body[:300] + "..."


def load(path):
    with open(path, encoding="utf-8") as f:
        return Contract(yaml.safe_load(f))


def run(contract, record_dir):
    files = sorted(glob.glob(os.path.join(record_dir, "*.jsonl")))
    total = 0
    seen = collections.Counter()
    bad = collections.defaultdict(list)
    for path in files:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                rec = json.loads(line)
                total += 1
                for key, msg in contract.check(rec):
                    bad[key].append("%s:%d: %s %s: %s" % (
                        os.path.basename(path), n, rec["method"], rec["path"], msg))
                template, _ = contract.match(rec["path"].split("?", 1)[0])
                seen["%s %s -> %d" % (rec["method"], template or "<unknown path>",
                                      rec["status"])] += 1
    if total == 0:
        print("contract_check: no records in %s: run the integration programs with "
              "DPOPT_TEST_CONTRACT_DIR set" % record_dir, file=sys.stderr)
        return 1
    print("contract_check: %d responses from %d files, %d (operation, status) pairs" % (
        total, len(files), len(seen)))
    for k in sorted(seen):
        print("  %6d  %s" % (seen[k], k))
    ops = {"%s %s" % (m.upper(), t) for _, t, item in contract.paths for m in item
           if m in METHODS}
    hit = {k.rsplit(" -> ", 1)[0] for k in seen}
    for op in sorted(ops - hit):
        print("  (never exercised: %s)" % op)
    nbad = sum(len(v) for v in bad.values())
    for key in sorted(bad):
        print("MISMATCH %s (%d):" % (key, len(bad[key])))
        for m in bad[key][:5]:
            print("  " + m)
    print("contract_check: %d mismatches" % nbad)
    return 1 if nbad else 0


def self_test(contract):
    """Records that must fail, and one that must pass: the check can fail."""
    err = json.dumps({"error": {"code": "not_found", "message": "no dataset 'x'",
                                "request_id": "0123456789abcdef"}})
    ok = [
        {"method": "GET", "path": "/healthz", "status": 200,
         "content_type": "application/json", "body": '{"status": "ok"}'},
        {"method": "GET", "path": "/v1/no-such-path?x=1", "status": 404,
         "content_type": "application/json", "body": err},
    ]
    if "413" in contract.any_route:  # on any path and method, with its body
        big = err.replace("not_found", "body_too_large")
        ok.append({"method": "POST", "path": "/healthz", "status": 413,
                   "content_type": "application/json", "body": big})
    bad = [
        # a status the operation does not list
        {"method": "GET", "path": "/healthz", "status": 418,
         "content_type": "application/json", "body": '{"status": "ok"}'},
        # a body that breaks the schema
        {"method": "GET", "path": "/healthz", "status": 200,
         "content_type": "application/json", "body": '{"status": 7}'},
        # the wrong media type
        {"method": "GET", "path": "/healthz", "status": 200,
         "content_type": "text/html", "body": "<html></html>"},
        # not JSON
        {"method": "GET", "path": "/healthz", "status": 200,
         "content_type": "application/json", "body": "{"},
        # an error body without the shape, through a $ref'd response
        {"method": "GET", "path": "/v1/datasets/505aba3f-0f99-4533-98bb-4e490fe434ce",
         "status": 404, "content_type": "application/json", "body": '{"message": "gone"}'},
        # an unknown path answered 200
        {"method": "GET", "path": "/v1/no-such-path", "status": 200,
         "content_type": "application/json", "body": "{}"},
        # a status any route may get, with another body
        {"method": "POST", "path": "/healthz", "status": 413,
         "content_type": "application/json", "body": '{"x": 1}'},
        # an undeclared method answered other than 405
        {"method": "PUT", "path": "/healthz", "status": 200,
         "content_type": "application/json", "body": "{}"},
    ]
    failed = 0
    for rec in ok:
        if contract.check(rec):
            print("self-test: a good record failed: %s: %s" % (rec, contract.check(rec)))
            failed += 1
    for rec in bad:
        if not contract.check(rec):
            print("self-test: a bad record passed: %s" % rec)
            failed += 1
    print("self-test: %d good and %d bad records, %d wrong verdicts" % (
        len(ok), len(bad), failed))
    return 1 if failed else 0


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    contract = load(argv[1])
    if argv[2] == "--self-test":
        return self_test(contract)
    return run(contract, argv[2])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
