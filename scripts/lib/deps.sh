# deps.sh - sourced by scripts/up and scripts/test: install the Debian
# packages dpopt needs, only those missing.  Needs root or sudo.
DPOPT_PACKAGES="meson ninja-build pkg-config gcc python3 check libmicrohttpd-dev
libjansson-dev libpq-dev libssl-dev libcurl4-openssl-dev postgresql curl jq clang
python3-yaml python3-jsonschema"

dpopt_install_deps() { # [PACKAGES]: default $DPOPT_PACKAGES
	missing=""
	for p in ${1:-$DPOPT_PACKAGES}; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	echo "installing:$missing" >&2
	SUDO=""
	[ "$(id -u)" = 0 ] || SUDO="sudo"
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
	# shellcheck disable=SC2086
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		$missing >/dev/null
}

# The utility experiment's CI run (bench/experiments/utility, test
# utility_smoke in suite algorithms): scikit-learn for its datasets and the
# non-private references.  scripts/test only; scripts/up does not need it.
DPOPT_BENCH_PACKAGES="python3-sklearn"

dpopt_install_bench_deps() {
	dpopt_install_deps "$DPOPT_BENCH_PACKAGES"
}

# The deploy suite (tests/deploy, issue 10): image builds (buildah, with
# podman to import the locally made base image, mmdebstrap to make it),
# promtool (prometheus), kubectl (Debian's kubernetes-client, unless a
# kubectl is already there) and npm (for the pinned schema validator, which
# tests/deploy/manifests.sh installs under build/).
DPOPT_DEPLOY_PACKAGES="buildah podman mmdebstrap prometheus"

dpopt_install_deploy_deps() {
	missing=""
	for p in $DPOPT_DEPLOY_PACKAGES; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing="$missing $p"
	done
	command -v kubectl >/dev/null 2>&1 || missing="$missing kubernetes-client"
	command -v npm >/dev/null 2>&1 || missing="$missing npm"
	[ -z "$missing" ] && return 0
	echo "installing (deploy suite):$missing" >&2
	SUDO=""
	[ "$(id -u)" = 0 ] || SUDO="sudo"
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
	# shellcheck disable=SC2086
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		$missing >/dev/null
}
