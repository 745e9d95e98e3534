# service.sh - sourced by scripts/up and tests/readme.sh: start dpoptd in
# the background, wait for it, make the demo key, run the demo.  Files go
# to ./var of the current directory; DPOPT_DATABASE_URL and DPOPT_LISTEN
# must be set.
#
#   dpopt_service_start BIN   start BIN unless var/dpoptd.pid runs; log in var/dpoptd.log
#   dpopt_service_wait URL    until GET URL/readyz answers 200 (10 s)
#   dpopt_demo_key BIN        var/demo.key: an owner key of tenant "demo" (made once)
#   dpopt_demo URL            the demo: a dataset, a run, its result and the budget

dpopt_service_start() {
	mkdir -p var
	if [ -f var/dpoptd.pid ] && kill -0 "$(cat var/dpoptd.pid)" 2>/dev/null; then
		echo "dpoptd already running (pid $(cat var/dpoptd.pid))"
	else
		nohup "$1" >>var/dpoptd.log 2>&1 &
		echo $! >var/dpoptd.pid
		echo "dpoptd started (pid $!), log in var/dpoptd.log"
	fi
}

dpopt_service_wait() {
	i=0
	until curl -sf "$1/readyz" >/dev/null; do
		i=$((i + 1))
		[ $i -lt 100 ] || { echo "dpoptd did not become ready; see var/dpoptd.log" >&2; return 1; }
		sleep 0.1
	done
}

dpopt_demo_key() {
	[ -s var/demo.key ] || "$1" keys create --tenant demo --role owner >var/demo.key 2>>var/dpoptd.log
}

# The demo dataset is reused while its budget pays for a run (ε = 1); the
# same rows never get a second budget (budget laundering), so once it is
# spent the demo samples fresh rows of the same model into a new dataset.
# Reads examples/ of the current directory.
dpopt_demo() {
	URL=$1
	AUTH="Authorization: Bearer $(cat var/demo.key)"
	DS=""
	if [ -s var/demo.dataset ]; then
		DS=$(cat var/demo.dataset)
		LEFT=$(curl -sf "$URL/v1/datasets/$DS" -H "$AUTH" | jq -r '.budget.epsilon.remaining // 0') || LEFT=0
		if [ "$(python3 -c "print(int(float('$LEFT') >= 1))")" != 1 ]; then
			echo "== demo dataset $DS: remaining ε = $LEFT, not enough for another run"
			DS=""
		fi
	fi
	if [ -z "$DS" ]; then
		DATA=examples/logistic_demo.csv
		if [ -s var/demo.dataset ]; then
			DATA=var/demo-rows.csv
			python3 examples/make_logistic_demo.py --seed "$(date +%s%N)" --out "$DATA"
		fi
		echo "== demo: a new dataset from $DATA (see examples/README.md)"
		DS=$(curl -sf -X POST "$URL/v1/datasets" -H "$AUTH" -H 'Content-Type: application/json' \
			--data '{"name": "logistic-demo", "schema": {"features": 10, "task": "binary"},
			         "bounds": {"feature_l2": 1.0}, "budget": {"epsilon": 3.0, "delta": 1e-5},
			         "accounting_mode": "basic"}' | jq -r .id)
		curl -sf -X PUT "$URL/v1/datasets/$DS/data" -H "$AUTH" -H 'Content-Type: text/csv' \
			--data-binary @"$DATA" | jq -c . || return 1
		echo "$DS" >var/demo.dataset
	else
		echo "== demo: dataset $DS again (remaining ε = $LEFT)"
	fi
	RUN=$(curl -sf -X POST "$URL/v1/datasets/$DS/runs" -H "$AUTH" -H 'Content-Type: application/json' \
		--data '{"algorithm": "dp_sgd.one_pass", "objective": {"name": "logistic"},
		         "constraints": {"x": {"kind": "l2_ball", "radius": 5}},
		         "privacy": {"epsilon": 1.0, "delta": 1e-6}}' | jq -r .id)
	echo "run $RUN queued"
	i=0
	while :; do
		STATE=$(curl -sf "$URL/v1/runs/$RUN" -H "$AUTH" | jq -r .state)
		case $STATE in succeeded | failed | cancelled) break ;; esac
		i=$((i + 1))
		[ $i -lt 600 ] || { echo "run did not finish in 60 s" >&2; return 1; }
		sleep 0.1
	done
	echo "== result"
	curl -sf "$URL/v1/runs/$RUN" -H "$AUTH" | jq '{state, result}'
	echo "== budget of dataset $DS"
	curl -sf "$URL/v1/datasets/$DS" -H "$AUTH" | jq .budget
	[ "$STATE" = succeeded ]
}
