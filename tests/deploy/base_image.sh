#!/bin/sh
# base_image.sh: make sure the Dockerfile's base image is in local container
# storage.  No registry is reachable here, so debian:bookworm-slim is made
# once from Debian's packages (mmdebstrap --variant=minbase bookworm, the same
# suite and variant as the official image, without its trimming) and
# imported under the name the Dockerfile names; later runs reuse it.
# Exits non-zero, saying why, when it cannot be made.
set -eu
IMAGE=docker.io/library/debian:bookworm-slim
if buildah inspect --type image "$IMAGE" >/dev/null 2>&1; then
	exit 0
fi
command -v mmdebstrap >/dev/null || { echo "base_image: mmdebstrap is missing" >&2; exit 1; }
TMP=$(mktemp -d /tmp/dpopt-base.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
echo "base_image: creating $IMAGE with mmdebstrap (first time only)" >&2
# The mirrors are the host's own apt sources, so it works wherever apt does
# (the host is Debian bookworm, as scripts/lib/deps.sh assumes).
set --
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
	[ -f "$f" ] && set -- "$@" "$f"
done
[ $# -gt 0 ] || { echo "base_image: no apt sources on this host" >&2; exit 1; }
# merged-usr: the hook instead of the usrmerge package (which pulls in perl).
mmdebstrap --variant=minbase --quiet --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
	--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
	bookworm "$TMP/rootfs.tar" "$@" </dev/null >"$TMP/mmdebstrap.log" 2>&1 ||
	{ tail -n 30 "$TMP/mmdebstrap.log" >&2; echo "base_image: mmdebstrap failed" >&2; exit 1; }
podman import --change 'CMD ["bash"]' "$TMP/rootfs.tar" "$IMAGE" >/dev/null ||
	{ echo "base_image: podman import failed" >&2; exit 1; }
buildah inspect --type image "$IMAGE" >/dev/null
