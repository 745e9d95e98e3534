# pg.sh - sourced: a private PostgreSQL cluster in a directory, listening
# only on a Unix socket inside it.  initdb refuses to run as root, so as
# root the cluster is run by the unprivileged user "nobody".
#
#   pg_cluster_start DIR   create (once) and start; sets PG_URL
#   pg_cluster_stop DIR    stop (fast) if running

pg_bindir() {
	if command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/initdb" ]; then
		pg_config --bindir
	else
		ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1
	fi
}

pg_run() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u nobody -- "$@"
	else
		"$@"
	fi
}

pg_cluster_start() {
	dir=$1
	bin=$(pg_bindir)
	mkdir -p "$dir"
	[ "$(id -u)" = 0 ] && chown nobody "$dir"
	if [ ! -f "$dir/data/PG_VERSION" ]; then
		pg_run "$bin/initdb" -D "$dir/data" -U dpopt -A trust --no-sync \
			>"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; return 1; }
	fi
	if ! pg_run "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
		pg_run "$bin/pg_ctl" -D "$dir/data" -l "$dir/pg.log" -w -t 60 \
			-o "-k $dir -c listen_addresses='' -c max_connections=300" start >/dev/null ||
			{ tail -n 20 "$dir/pg.log" >&2; return 1; }
	fi
	PG_URL="host=$dir user=dpopt dbname=postgres"
	export PG_URL
}

pg_cluster_stop() {
	dir=$1
	bin=$(pg_bindir)
	[ -f "$dir/data/PG_VERSION" ] || return 0
	pg_run "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
}
