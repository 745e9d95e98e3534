#!/bin/sh
# manifests.sh SRC CACHE: deploy/kubernetes renders with `kubectl
# kustomize` (base and overlays/dev); every rendered object validates
# against the Kubernetes API schemas of the npm package kubernetes-models
# (pinned below, installed once into CACHE); manifest_policy.py asserts what
# an operator relies on (security contexts, probes, resources, PDB, ...).
# A missing tool is a failure with its reason, never a pass.
set -u
SRC=$1
CACHE=$2
MODELS=kubernetes-models@4.5.1
fail() { echo "FAIL manifests: $*"; echo "0 passed, 1 failed"; exit 1; }
command -v kubectl >/dev/null || fail "kubectl is missing (Debian kubernetes-client; scripts/lib/deps.sh)"
command -v node >/dev/null || fail "node is missing"
command -v npm >/dev/null || fail "npm is missing"
mkdir -p "$CACHE"
if [ ! -f "$CACHE/node_modules/kubernetes-models/package.json" ] ||
	! grep -q '"version": "4.5.1"' "$CACHE/node_modules/kubernetes-models/package.json"; then
	npm install --prefix "$CACHE" --no-audit --no-fund --no-save --silent "$MODELS" \
		>"$CACHE/npm.log" 2>&1 || { cat "$CACHE/npm.log"; fail "npm install $MODELS failed"; }
fi
OUT=$(mktemp -d /tmp/dpopt-manifests.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
for o in base overlays/dev; do
	name=$(echo "$o" | tr / -)
	kubectl kustomize "$SRC/deploy/kubernetes/$o" >"$OUT/$name.yaml" 2>"$OUT/$name.err" ||
		{ cat "$OUT/$name.err"; fail "kubectl kustomize $o"; }
	python3 -c 'import json, sys, yaml
json.dump([d for d in yaml.safe_load_all(open(sys.argv[1])) if d], open(sys.argv[2], "w"))' \
		"$OUT/$name.yaml" "$OUT/$name.json" || fail "$o: rendered YAML does not parse"
	NODE_PATH="$CACHE/node_modules" node "$SRC/tests/deploy/validate.js" "$OUT/$name.json" ||
		fail "$o: schema validation"
done
python3 "$SRC/tests/deploy/manifest_policy.py" "$OUT/base.json" "$OUT/overlays-dev.json"
