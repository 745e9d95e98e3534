# deps.sh - sourced by scripts/up and scripts/test: install the Debian
# packages dpopt needs, only those missing.  Needs root or sudo.
DPOPT_PACKAGES="meson ninja-build pkg-config gcc python3 check libmicrohttpd-dev
libjansson-dev libpq-dev libssl-dev libcurl4-openssl-dev postgresql curl jq clang
python3-yaml python3-jsonschema"

dpopt_install_deps() {
	missing=""
	for p in $DPOPT_PACKAGES; do
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
