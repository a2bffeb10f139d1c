#!/usr/bin/env bash
# san: skip  (Prometheus and Python processes dominate; the analysis runs under ASan in unit/test_cluster)
# tests/e2e/test_cluster.sh - a job of 4 ranks on two "nodes", each node a
# network namespace (ip netns, a veth to this one, a host name of its own)
# running 2 ranks under `proftop serve`, a real Prometheus (Debian's)
# scraping both, and `proftop cluster` reading Prometheus' query API: rank 3
# made slow in its data loading is named the straggler with its Dataloader,
# then rank 2 made to hang before a collective is named missing, with what
# it has open, while ranks 0, 1 and 3 wait. The ranks are tests/e2e/
# fake_ranks.py (their collectives a real barrier, recorded through the
# probe's collective calls; no torch). Without the rights for network
# namespaces both nodes listen on loopback, said in the test names. Also the
# shipped rules (`promtool check rules`, `promtool test rules`) and the
# Grafana dashboard (valid JSON; every metric its queries and the rules name
# is one `proftop serve` writes or a rule records).
. tests/e2e/lib.sh
LIB=${PROFTOP_LIB:-build/libproftop.so}
export PROFTOP_SESSION_DIR="$TMP/sessions"
mkdir -m 700 "$PROFTOP_SESSION_DIR"
PIDS=()
NS=()
cleanup() {
	local p n
	for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null
	done
	for n in "${NS[@]}"; do ip netns del "$n" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# --- the shipped rules and dashboard
if command -v promtool >/dev/null 2>&1; then
	check "promtool check rules deploy/proftop-rules.yml" promtool check rules deploy/proftop-rules.yml
	check "promtool test rules: the straggler and hang alerts fire on proftop's series, not before" \
		sh -c 'cd deploy && promtool test rules proftop-rules.test.yml'
else
	skip "promtool check rules" "no promtool (Debian package prometheus)"
	skip "promtool test rules" "no promtool (Debian package prometheus)"
fi

# --- a rank that dies mid-job: the others marked waiting on a dead peer
D0=$TMP/barrier0
"$PROFTOP" record --hang-after 2 -o "$TMP/die.json" --log "$TMP/die.log" -- \
	python3 tests/e2e/fake_ranks.py --ranks 2 --dir "$D0" --steps 100000 --die-rank 1 --die-at 20 \
	>"$TMP/die.err" 2>&1 &
rpid=$!
PIDS+=($rpid)
for _ in $(seq 120); do
	grep -q "^proftop: hang: " "$TMP/die.err" && break
	sleep 0.25
done
kill -INT "$rpid" 2>/dev/null # the user ends the job: the trace is still written
for _ in $(seq 100); do kill -0 "$rpid" 2>/dev/null || break; sleep 0.1; done
if grep -q "^proftop: hang: rank 0 has waited [0-9]* s in all_reduce #20 (group 0); rank 1 died before entering it" "$TMP/die.err"; then
	ok "a rank that dies mid-job: the other is waiting on a dead peer, said while it waits"
else
	not_ok "a rank that dies mid-job" "$(cat "$TMP/die.err")" "$(tail -n 3 "$TMP/die.log")"
fi
if [ -s "$TMP/die.json" ] && "$PROFTOP" report --json --hang-after 1 "$TMP/die.json" |
	python3 -c 'import json,sys; h=json.load(sys.stdin)["hang"]; sys.exit(not (h and h["missing_ranks"] == [1] and h["waiting_ranks"] == [0]))'; then
	ok "its trace, written after Ctrl-C, has the hang: waiting [0], missing [1]"
else
	not_ok "the dead peer's trace" "$(ls -la "$TMP/die.json" 2>&1)"
fi

PROM=${PROMETHEUS:-$(command -v prometheus || echo /usr/bin/prometheus)}
if [ ! -x "$PROM" ]; then
	skip "two nodes under Prometheus" "no prometheus binary (Debian package prometheus)"
	done_testing
	exit 0
fi

# --- two nodes
id=$$
hosts=(pt-node-a pt-node-b)
addrs=()
where="network namespaces"
if ip netns add "ptA$id" 2>/dev/null; then
	NS+=("ptA$id")
	ok=1
	ip netns add "ptB$id" 2>/dev/null && NS+=("ptB$id") || ok=0
	for i in 0 1; do
		[ $ok = 1 ] || break
		n=${NS[$i]}
		a=$((id % 200 + 20))
		ip link add "pt$i$id" type veth peer name "pn$i$id" 2>/dev/null &&
			ip link set "pn$i$id" netns "$n" &&
			ip addr add "10.$a.$i.1/30" dev "pt$i$id" && ip link set "pt$i$id" up &&
			ip -n "$n" addr add "10.$a.$i.2/30" dev "pn$i$id" && ip -n "$n" link set "pn$i$id" up &&
			ip -n "$n" link set lo up || ok=0
		addrs+=("10.$a.$i.2")
	done
	if [ $ok = 0 ]; then
		where="loopback (network namespaces failed)"
		for n in "${NS[@]}"; do ip netns del "$n" 2>/dev/null; done
		NS=()
	fi
else
	where="loopback (no rights for network namespaces)"
fi
if [ ${#NS[@]} -ne 2 ]; then
	addrs=(127.0.0.1 127.0.0.1)
fi
ports=($(free_port) $(free_port))
D=$TMP/barrier
mkdir -p "$D"
# node I: proftop serve of ranks 2I, 2I+1 of 4 (rank 3 slow, rank 2 hangs at step 500)
node() {
	local i=$1 listen="${addrs[$1]}:${ports[$1]}"
	local cmd=("$PROFTOP" serve --listen "$listen" --refresh 0.5 --hang-after 2 --log "$TMP/job$i.log" --
		python3 tests/e2e/fake_ranks.py --ranks 2 --world 4 --first-rank $((2 * i)) --dir "$D"
		--steps 900 --late-rank 3 --late-ms 15 --hang-rank 2 --hang-at 500 --hang-s 25)
	if [ ${#NS[@]} -eq 2 ]; then
		ip netns exec "${NS[$i]}" unshare --uts sh -c 'hostname "$0" && exec "$@"' "${hosts[$i]}" \
			"${cmd[@]}" >"$TMP/serve$i.out" 2>&1 &
	else
		"${cmd[@]}" >"$TMP/serve$i.out" 2>&1 &
	fi
	PIDS+=($!)
}
node 0
node 1
# prometheus NAME JOB TARGETS: a Prometheus scraping TARGETS every second as
# job JOB, its port in $pport
prometheus() {
	pport=$(free_port)
	printf 'global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: %s\n    static_configs:\n      - targets: [%s]\n' \
		"$2" "$3" >"$TMP/$1.yml"
	"$PROM" --config.file="$TMP/$1.yml" --storage.tsdb.path="$TMP/$1-data" \
		--web.listen-address="127.0.0.1:$pport" >"$TMP/$1.log" 2>&1 &
	PIDS+=($!)
}
prometheus prom train "'${addrs[0]}:${ports[0]}', '${addrs[1]}:${ports[1]}'"
P=http://127.0.0.1:$pport
# cl: proftop cluster's JSON now
cl() { "$PROFTOP" cluster --prometheus "$P" --job train --json --timeout 5 2>&1; }
jq() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($1)" "$TMP/cl.json" 2>/dev/null; }

# the straggler, before the hang (rank 2 hangs after 500 steps, ~10 s)
got=
for _ in $(seq 60); do
	cl >"$TMP/cl.json"
	if [ "$(jq '"%s %s" % (d["ranks_n"], d["straggler"])')" = "4 3" ] &&
		[ "$(jq '"spends" in d["straggler_reason"]')" = True ]; then
		got=1
		break
	fi
	sleep 0.5
done
reason=$(jq 'd["straggler_reason"]')
if [ -n "$got" ] && grep -q "^rank 3 (.*Dataloader" <<<"$reason"; then
	ok "two nodes ($where), Prometheus between: proftop cluster names rank 3 the straggler: $reason"
else
	not_ok "the straggler across nodes ($where)" "$(head -c 600 "$TMP/cl.json")" "$(tail -n 3 "$TMP/prom.log")" \
		"$(head -n 3 "$TMP/serve0.out" "$TMP/serve1.out")"
fi
hosts_seen=$(jq '" ".join(sorted(set(r["host"] for r in d["ranks"])))')
if [ ${#NS[@]} -eq 2 ]; then
	[ "$hosts_seen" = "pt-node-a pt-node-b" ] && ok "each node's ranks carry its host name" ||
		not_ok "host names" "$hosts_seen"
else
	skip "each node's ranks carry its host name" "both nodes on this host's loopback"
fi

# the hang: rank 2 sleeps in its data loading, ranks 0, 1 and 3 wait
got=
for _ in $(seq 80); do
	cl >"$TMP/cl.json"
	if [ "$(jq 'd["hang"] and "%s %s" % (d["hang"]["missing_ranks"], d["hang"]["waiting_ranks"])')" = "[2] [0, 1, 3]" ]; then
		got=1
		break
	fi
	sleep 0.5
done
text=$(jq 'd["hang"]["text"]')
if [ -n "$got" ] && grep -q "ranks 0,1,3 have waited [0-9]* s in all_reduce #500 (group 0); rank 2 (.*) never entered it, Dataloader open for" <<<"$text"; then
	ok "the hang across nodes: $text"
else
	not_ok "the hang across nodes" "$text" "$(head -c 600 "$TMP/cl.json")"
fi
"$PROFTOP" cluster --prometheus "$P" --job train --once >"$TMP/cl.txt" 2>&1
if grep -q "^HANG: ranks 0,1,3" "$TMP/cl.txt" && grep -q "< missing" "$TMP/cl.txt"; then
	ok "the text view says the same (HANG line, the missing rank marked)"
else
	not_ok "the text view" "$(head -n 8 "$TMP/cl.txt")"
fi

# the dashboard and the rules name only series that exist
curl_m() { python3 -c "import urllib.request,sys; print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())" "$1"; }
if [ ${#NS[@]} -eq 2 ]; then
	ip netns exec "${NS[1]}" python3 -c "import urllib.request,sys; print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())" \
		"http://${addrs[1]}:${ports[1]}/metrics" >"$TMP/metrics.txt" 2>&1
else
	curl_m "http://${addrs[1]}:${ports[1]}/metrics" >"$TMP/metrics.txt" 2>&1
fi
v=$(python3 - "$TMP/metrics.txt" deploy/proftop-dashboard.json deploy/proftop-rules.yml <<'PYEOF'
import json, re, sys
have = set(re.findall(r"^# TYPE (\S+)", open(sys.argv[1]).read(), re.M))
rules = open(sys.argv[3]).read()
recorded = set(re.findall(r"record: (\S+)", rules))
d = json.load(open(sys.argv[2]))
exprs = [t["expr"] for p in d["panels"] for t in p.get("targets", [])]
exprs += re.findall(r"expr: >?\s*\n?\s*(.+)", rules)
names = set()
for e in exprs:
    names |= set(re.findall(r"\bproftop[_:][a-z_:]+", e))
names |= set(re.findall(r"\bproftop_[a-z_]+", rules))
missing = sorted(n for n in names if n not in have and n not in recorded
                 and re.sub(r"_(sum|count|total)$", "", n) not in have)
print("FAIL missing %s" % missing if missing or not exprs else "OK %d queries, %d series names" % (len(exprs), len(names)))
PYEOF
)
[ "${v%% *}" = OK ] && ok "the dashboard and the rules use series proftop serve writes (${v#OK })" ||
	not_ok "the dashboard's series" "$v"

# --- 1,024 ranks (synthetic series, one scrape target): the straggler still named
mport=$(free_port)
python3 tests/e2e/fake_metrics.py "$mport" 1024 777 >"$TMP/fake.out" 2>&1 &
PIDS+=($!)
prometheus prom2 big "'127.0.0.1:$mport'"
pport2=$pport
got=
for _ in $(seq 60); do
	"$PROFTOP" cluster --prometheus "http://127.0.0.1:$pport2" --job big --json --timeout 5 >"$TMP/cl.json" 2>&1
	[ "$(jq '"%s %s" % (d["ranks_n"], d["straggler"])')" = "1024 777" ] && { got=1; break; }
	sleep 0.5
done
t0=$(date +%s%N)
"$PROFTOP" cluster --prometheus "http://127.0.0.1:$pport2" --job big --once >"$TMP/big.txt" 2>&1
ms=$((($(date +%s%N) - t0) / 1000000))
if [ -n "$got" ] && grep -q "^Straggler: rank 777 (node97) spends 1% .*Dataloader" "$TMP/big.txt"; then
	ok "1,024 ranks on 128 hosts (synthetic series): rank 777 named with its Dataloader (one view: $ms ms here, 9 queries)"
else
	not_ok "1,024 ranks" "$(head -c 400 "$TMP/cl.json")" "$(head -n 4 "$TMP/big.txt")"
fi
done_testing
