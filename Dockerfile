# syntax=docker/dockerfile:1
# dpoptd: the dpopt service.  Two stages on debian:bookworm-slim: the build
# stage compiles the release binary with Debian's -dev packages and meson;
# the runtime stage has only the runtime libraries and the binary, runs as a
# fixed non-root UID and writes nothing outside /tmp (mount an emptyDir
# there), so it runs with a read-only root filesystem.
#
#   docker build -t dpopt:0.1.0 .          (or: buildah bud -t dpopt:0.1.0 .)
#   docker run -e DPOPT_DATABASE_URL=... -p 8080:8080 dpopt:0.1.0
#   docker run -e DPOPT_DATABASE_URL=... dpopt:0.1.0 migrate
#   docker run -e DPOPT_DATABASE_URL=... dpopt:0.1.0 keys create --tenant acme --role owner
#
# Configuration is by environment only (README "Configuration"):
# DPOPT_DATABASE_URL, or libpq's PG* variables (PGHOST, PGUSER,
# PGPASSFILE=a mounted password file, PGSSLMODE, ...).

ARG DEBIAN_IMAGE=docker.io/library/debian:bookworm-slim

FROM ${DEBIAN_IMAGE} AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      gcc libc6-dev meson ninja-build pkg-config python3 \
      libmicrohttpd-dev libjansson-dev libpq-dev libssl-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# Release build of the service only: no tests, no testing hooks, no benches
# (-Werror is the CI build's gate: gcc -O3 adds maybe-uninitialized false
# positives).
RUN meson setup /build -Dbuildtype=release -Dtests=disabled -Dtesting=false \
 && ninja -C /build service/dpoptd \
 && install -D -m 0755 -s /build/service/dpoptd /out/usr/local/bin/dpoptd

FROM ${DEBIAN_IMAGE} AS runtime
# Set at build time: --build-arg VERSION=... --build-arg SOURCE=<repository URL>
# --build-arg LICENSES=<SPDX expression>; the repository states no licence yet.
ARG VERSION=0.1.0
ARG SOURCE=dpopt
ARG LICENSES=NOASSERTION
# ca-certificates: TLS to a managed PostgreSQL (sslmode=verify-full).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libmicrohttpd12 libjansson4 libpq5 libssl3 ca-certificates \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/apt/* /var/log/dpkg.log \
 && echo 'dpopt:x:10001:10001:dpopt:/nonexistent:/usr/sbin/nologin' >>/etc/passwd \
 && echo 'dpopt:x:10001:' >>/etc/group
COPY --from=build /out/ /
LABEL org.opencontainers.image.title="dpoptd" \
      org.opencontainers.image.description="dpopt: differentially private optimization as a REST service with a PostgreSQL privacy ledger" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="${LICENSES}"
# Listen on every address of the pod; JSON log lines on stdout.
ENV DPOPT_LISTEN=0.0.0.0:8080 \
    DPOPT_LOG_FORMAT=json
USER 10001:10001
WORKDIR /tmp
VOLUME ["/tmp"]
EXPOSE 8080/tcp
# SIGTERM: /readyz 503, no new connections, requests in flight finish
# (DPOPT_SHUTDOWN_GRACE_SECONDS), running runs go back to the queue; all of
# it within DPOPT_SHUTDOWN_SECONDS (default 25 s, below Kubernetes' 30 s).
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/dpoptd"]
