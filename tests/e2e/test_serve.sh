#!/usr/bin/env bash
# tests/e2e/test_serve.sh - `proftop serve`, the Prometheus exporter, end to
# end: command-line errors (no source, a pid list without sessions, a malformed
# --listen, a port already taken), then `serve -- minitrain` on a free
# loopback port: /metrics (read with python's urllib) has the families, the
# labels and sane values, passes `promtool check metrics` when present, / is
# an index, other paths 404, POST 405; a real Prometheus (Debian's
# `prometheus`, when installed) on loopback scrapes it every second and its
# HTTP API answers proftop_ips and the step-time median for the trainer's
# pid; Ctrl-C stops serve and the trainer. Last, `serve -p PID` on a
# running trainer ends when the trainer exits. Everything started here is
# killed in a trap.
. tests/e2e/lib.sh

case "$PROFTOP" in /*) ;; *) PROFTOP=$PWD/$PROFTOP ;; esac # the test cds into $TMP
LIB=$PWD/build/libproftop.so
MINI=$PWD/build/examples/minitrain
export PROFTOP_SESSION_DIR="$TMP/sessions"
mkdir -m 700 "$PROFTOP_SESSION_DIR"
export PROFTOP_LIB=$LIB

PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null
	done
	rm -rf "$TMP"
}
trap cleanup EXIT

# http URL [METHOD]: prints "STATUS\n" then the body (python's urllib, no curl)
http() {
	python3 - "$1" "${2:-GET}" <<'EOF'
import sys, urllib.request, urllib.error
req = urllib.request.Request(sys.argv[1], method=sys.argv[2], data=b"x" if sys.argv[2] == "POST" else None)
try:
    with urllib.request.urlopen(req, timeout=10) as r:
        status, body, ctype = r.status, r.read(), r.headers.get("Content-Type", "")
except urllib.error.HTTPError as e:
    status, body, ctype = e.code, e.read(), e.headers.get("Content-Type", "")
except Exception as e:
    print("ERR %s" % e)
    sys.exit(1)
sys.stdout.write("%d\n%s\n" % (status, ctype))
sys.stdout.write(body.decode("utf-8"))
EOF
}

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# --- the command line
check_out "serve --help" "--listen ADDR:PORT" "$PROFTOP" serve --help
check_out "help serve" "Prometheus" "$PROFTOP" help serve
check_fails "serve without a source exits 2" 2 "$PROFTOP" serve
check_fails "serve -p and a CMD exits 2" 2 "$PROFTOP" serve -p 1 -- true
check_fails "serve -p junk exits 2" 2 "$PROFTOP" serve -p 12,x
check_fails "serve --top junk exits 2" 2 "$PROFTOP" serve --top -1 -- true
check_out "several pids: each must have a session" "no process 999998|no proftop session for pid 999998" sh -c "'$PROFTOP' serve -p 999998,999999 2>&1; test \$? -eq 1"
check_out "-p without a session" "no process 999999|no proftop session for pid" sh -c "'$PROFTOP' serve -p 999999 2>&1; test \$? -eq 1"
check_out "a malformed --listen" "expected ADDR:PORT" sh -c "'$PROFTOP' serve --listen 9464 -- true 2>&1; test \$? -eq 1"
check_out "a bad port" "not a port number" sh -c "'$PROFTOP' serve --listen 127.0.0.1:99999 -- true 2>&1; test \$? -eq 1"
check_out "an address not of this machine" "not an address of this machine" \
	sh -c "'$PROFTOP' serve --listen 192.0.2.1:9464 -- true 2>&1; test \$? -eq 1"
# a port already taken (a python listener holds it)
python3 -c 'import socket,sys,time; s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(); print(s.getsockname()[1], flush=True); time.sleep(60)' >"$TMP/holder.port" &
PIDS+=($!)
for _ in $(seq 50); do [ -s "$TMP/holder.port" ] && break; sleep 0.1; done
taken=$(cat "$TMP/holder.port")
check_out "a port in use" "already in use" sh -c "'$PROFTOP' serve --listen 127.0.0.1:$taken -- true 2>&1; test \$? -eq 1"
check_fails "nothing started when the port is taken" 1 \
	sh -c "cd '$TMP' && '$PROFTOP' serve --listen 127.0.0.1:$taken -- sh -c 'touch started' 2>/dev/null; test ! -e started || exit 9; exit 1"

if [ ! -f "$LIB" ] || [ ! -x "$MINI" ]; then
	skip "serve minitrain" "no libproftop.so or minitrain"
	done_testing
	exit 0
fi

# --- serve -- minitrain on a free port (port 0: the kernel picks; serve says which)
cd "$TMP" || exit 1
"$PROFTOP" serve --listen 127.0.0.1:0 --refresh 0.5 --top 5 -- "$MINI" --steps 0 --reader-ms 5 \
	--batch 32 >"$TMP/serve.out" 2>"$TMP/serve.err" &
spid=$!
PIDS+=($spid)
cd - >/dev/null || exit 1
addr=
for _ in $(seq 100); do
	addr=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$TMP/serve.err" | head -n 1)
	[ -n "$addr" ] && break
	sleep 0.1
done
child=$(grep -o 'started pid [0-9]*' "$TMP/serve.err" | grep -o '[0-9]*$')
[ -n "$child" ] && PIDS+=("$child")
if [ -n "$addr" ] && [ -n "$child" ]; then ok "serve says where it listens"; else not_ok "serve says where it listens" "$(cat "$TMP/serve.err")"; fi

# wait for figures: a few steps aggregated
for _ in $(seq 100); do
	http "$addr/metrics" >"$TMP/m.txt" 2>&1
	grep -q "^proftop_steps{.*} [1-9]" "$TMP/m.txt" && break
	sleep 0.2
done
check_out "/metrics answers 200 in the text format" "^200$" head -n 1 "$TMP/m.txt"
check_out "content type version 0.0.4" "text/plain; version=0.0.4" sed -n 2p "$TMP/m.txt"
tail -n +3 "$TMP/m.txt" >"$TMP/metrics.txt"
missing=
for fam in proftop_step_seconds proftop_step_mean_seconds proftop_ips proftop_samples_per_second \
	proftop_reader_ratio proftop_phase_ratio proftop_gpu_utilization_ratio \
	proftop_process_cpu_ratio proftop_communication_ratio proftop_last_step \
	proftop_operator_seconds proftop_dropped_events_total proftop_events_total; do
	grep -q "^# TYPE $fam " "$TMP/metrics.txt" || missing="$missing $fam"
done
if [ -z "$missing" ]; then ok "every family is there"; else not_ok "every family is there" "missing:$missing"; fi
python3 - "$TMP/metrics.txt" "$child" >"$TMP/sane.txt" 2>&1 <<'EOF'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
pid = sys.argv[2]
vals, helps, types = {}, set(), set()
for line in text.splitlines():
    if line.startswith("# HELP "):
        n = line.split()[2]; assert n not in helps, "HELP twice: " + n; helps.add(n); continue
    if line.startswith("# TYPE "):
        n = line.split()[2]; assert n not in types, "TYPE twice: " + n; types.add(n); continue
    m = re.match(r'^([a-z_:]+)\{(.*)\} (\S+)$', line)
    assert m, "bad line: " + line
    key = m.group(1) + "{" + m.group(2) + "}"
    assert key not in vals, "duplicate series: " + key
    vals[key] = float(m.group(3))
def get(name, extra=""):
    for k, v in vals.items():
        if k.startswith(name + "{") and 'pid="%s"' % pid in k and extra in k:
            return v
    raise AssertionError("no %s%s for pid %s" % (name, extra, pid))
steps = get("proftop_steps"); assert steps >= 1, steps
ips = get("proftop_ips"); assert 0 < ips < 10000, ips
sps = get("proftop_samples_per_second"); assert abs(sps - 32 * ips) < 0.05 * sps + 1, (sps, ips)
rr = get("proftop_reader_ratio"); assert 0 < rr <= 1, rr
p50 = get("proftop_step_seconds", 'quantile="0.5"'); p99 = get("proftop_step_seconds", 'quantile="0.99"')
mx = get("proftop_step_seconds", 'quantile="1"')
assert 0.004 < p50 <= p99 <= mx < 10, (p50, p99, mx)
share = sum(get("proftop_phase_ratio", 'phase="%s"' % p) for p in
            ("dataloader", "forward", "backward", "optimization", "other"))
assert 0.9 < share < 1.01, share
assert get("proftop_last_step") >= 0
assert get("proftop_operator_seconds", 'op="matmul"') > 0
ops = [k for k in vals if k.startswith("proftop_operator_seconds{")]
assert len(ops) == 5, ops  # --top 5
assert any(k.startswith('proftop_ips{host="') for k in vals)
print("sane: steps=%d ips=%.1f reader=%.2f p50=%.4f" % (steps, ips, rr, p50))
EOF
check_out "values are sane (ips, samples/s, quantiles, phase shares, top 5 ops)" "^sane" cat "$TMP/sane.txt"
if command -v promtool >/dev/null 2>&1; then
	check "promtool check metrics accepts it" sh -c "promtool check metrics <'$TMP/metrics.txt'"
else
	skip "promtool check metrics accepts it" "no promtool (Debian package prometheus)"
fi
check_out "/ is an index pointing at /metrics" "href=\"/metrics\"" http "$addr/"
http "$addr/nope" >"$TMP/404.txt" 2>&1
check_out "other paths answer 404" "^404$" head -n 1 "$TMP/404.txt"
http "$addr/metrics" POST >"$TMP/405.txt" 2>&1
check_out "POST answers 405" "^405$" head -n 1 "$TMP/405.txt"
http "$addr/metrics" HEAD >"$TMP/head.txt" 2>&1
check_out "HEAD answers 200" "^200$" head -n 1 "$TMP/head.txt"

# --- slow clients (slowloris) do not lock scrapes out: N connections send a
# header line a second and reconnect when cut, from the scraper's own address
# (127.0.0.1, the per-address limit) or from 70 others (the global limit);
# a scrape must get through. Alone, a trickling request is cut after its
# deadline (5 s). Bounded: 24 rounds of 0.5 s at most.
slowloris() { # slowloris same|many|deadline
	python3 - "${addr#http://127.0.0.1:}" "$1" <<'EOF'
import socket, sys, time, urllib.request
port, mode = int(sys.argv[1]), sys.argv[2]
srcs = {"same": ["127.0.0.1"] * 50, "many": ["127.0.0.%d" % (2 + i) for i in range(70)],
        "deadline": ["127.0.0.99"] * 3}[mode]
conns = [None] * len(srcs)
born = [0.0] * len(srcs)
def opened(i):
    s = socket.socket()
    s.settimeout(1)
    try:
        s.bind((srcs[i], 0))
        s.connect(("127.0.0.1", port))
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        return s
    except OSError:
        s.close()
        return None
scraped = cut_after = None
t0 = time.time()
for rnd in range(24):
    for i in range(len(srcs)):
        s = conns[i]
        if s is not None:
            try:
                s.setblocking(False)
                gone = s.recv(1) == b""
            except BlockingIOError:
                gone = False
            except OSError:
                gone = True
            s.settimeout(1)
            if not gone:
                try:
                    s.sendall(b"X-Slow: %d\r\n" % rnd)
                except OSError:
                    gone = True
            if gone:
                s.close()
                if cut_after is None and time.time() - born[i] > 4.5:
                    cut_after = time.time() - born[i]
                conns[i] = s = None
        if s is None:
            conns[i] = opened(i)
            born[i] = time.time()
    if scraped is None and mode != "deadline":
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=2) as r:
                if r.status == 200 and b"proftop_steps" in r.read():
                    scraped = time.time() - t0
        except Exception:
            pass
    if scraped is not None or cut_after is not None:
        break
    time.sleep(0.5)
held = sum(c is not None for c in conns)
for c in conns:
    if c is not None:
        c.close()
print("scraped %s after %s s with %d slow connections open; a slow request cut after %s s"
      % ("yes" if scraped is not None else "no", "%.1f" % scraped if scraped is not None else "-",
         held, "%.1f" % cut_after if cut_after is not None else "-"))
EOF
}
slowloris same >"$TMP/slow1.txt" 2>&1
check_out "50 slow connections from the scraper's address: a scrape gets through" "^scraped yes" cat "$TMP/slow1.txt"
slowloris many >"$TMP/slow2.txt" 2>&1
check_out "70 slow connections from 70 addresses: a scrape gets through" "^scraped yes" cat "$TMP/slow2.txt"
slowloris deadline >"$TMP/slow3.txt" 2>&1
check_out "a request still trickling after its 5 s deadline is cut" "cut after ([5-9]|4\.[5-9])" cat "$TMP/slow3.txt"
echo "# $(cat "$TMP/slow1.txt"); $(cat "$TMP/slow2.txt"); $(cat "$TMP/slow3.txt")"

# --- a real Prometheus scrapes it
PROM=${PROMETHEUS:-$(command -v prometheus || echo /usr/bin/prometheus)}
if [ ! -x "$PROM" ]; then
	skip "Prometheus scrapes proftop_ips" "no prometheus binary (Debian package prometheus)"
	skip "Prometheus has the step-time median" "no prometheus binary"
else
	pport=$(free_port)
	target=${addr#http://}
	cat >"$TMP/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: proftop
    static_configs:
      - targets: ['$target']
EOF
	"$PROM" --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/prom-data" \
		--web.listen-address="127.0.0.1:$pport" >"$TMP/prom.log" 2>&1 &
	PIDS+=($!)
	papi="http://127.0.0.1:$pport/api/v1/query?query="
	got=
	for _ in $(seq 120); do
		http "${papi}proftop_ips" >"$TMP/q.txt" 2>&1
		if grep -q "\"pid\":\"$child\"" "$TMP/q.txt"; then got=1; break; fi
		sleep 0.5
	done
	if [ -n "$got" ]; then
		ok "Prometheus scrapes proftop_ips"
	else
		not_ok "Prometheus scrapes proftop_ips" "$(tail -c 400 "$TMP/q.txt")" "$(tail -n 5 "$TMP/prom.log")"
	fi
	python3 - "$TMP/q.txt" "$child" "$target" >"$TMP/q.check" 2>&1 <<'EOF'
import json, sys
body = open(sys.argv[1]).read().split("\n", 2)[2]
r = json.loads(body)
assert r["status"] == "success", r
s = [x for x in r["data"]["result"] if x["metric"].get("pid") == sys.argv[2]]
assert len(s) == 1, r
m = s[0]["metric"]
assert m["__name__"] == "proftop_ips" and m["job"] == "proftop" and m["instance"] == sys.argv[3], m
assert m.get("host"), m
assert float(s[0]["value"][1]) > 0, s
print("series ok", m)
EOF
	check_out "the series has the job, instance, host and pid labels" "^series ok" cat "$TMP/q.check"
	q='max%20by%20(pid)%20(proftop_step_seconds%7Bquantile%3D%220.5%22%7D)'
	http "$papi$q" >"$TMP/q2.txt" 2>&1
	check_out "Prometheus has the step-time median (a Grafana panel query)" "\"pid\":\"$child\".*\"value\":\[[0-9.]+,\"[0-9]+\.?[0-9]*(e-?[0-9]+)?\"" \
		cat "$TMP/q2.txt"
fi

# --- Ctrl-C: serve forwards it to the trainer, both end, the trainer's code passes through
kill -INT "$spid"
for _ in $(seq 100); do kill -0 "$spid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$spid" 2>/dev/null; then
	not_ok "Ctrl-C stops serve and the trainer" "still running"
else
	wait "$spid"
	rc=$?
	if [ $rc -eq 0 ] && ! kill -0 "$child" 2>/dev/null; then ok "Ctrl-C stops serve and the trainer"; else not_ok "Ctrl-C stops serve and the trainer" "rc=$rc $(tail -n 3 "$TMP/serve.err")"; fi
fi
check_out "serve says it stopped" "stopped serving" cat "$TMP/serve.err"

check_out "--all without a live session" "no live proftop sessions" \
	sh -c "'$PROFTOP' serve --listen 127.0.0.1:0 --all 2>&1; test \$? -eq 1"

# --- serve -p PID and serve --all (the one live session): end when the trainer exits
LD_PRELOAD=$LIB "$MINI" --steps 0 --reader-ms 5 >/dev/null 2>&1 &
mpid=$!
PIDS+=($mpid)
# until `proftop ls` shows it running (the segment's header is written by then)
for _ in $(seq 100); do
	"$PROFTOP" ls 2>/dev/null | grep -Eq "^$mpid +running" && break
	sleep 0.1
done
"$PROFTOP" serve --listen 127.0.0.1:0 --refresh 0.3 --window 2 -p "$mpid" >"$TMP/p.out" 2>"$TMP/p.err" &
ppid_=$!
PIDS+=($ppid_)
"$PROFTOP" serve --listen 127.0.0.1:0 --refresh 0.3 --all >"$TMP/a.out" 2>"$TMP/a.err" &
apid=$!
PIDS+=($apid)
for which in p a; do
	addr_=
	for _ in $(seq 100); do
		addr_=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$TMP/$which.err" | head -n 1)
		[ -n "$addr_" ] && break
		sleep 0.1
	done
	for _ in $(seq 100); do
		http "$addr_/metrics" >"$TMP/${which}m.txt" 2>&1
		grep -q "^proftop_steps{.*pid=\"$mpid\"} [1-9]" "$TMP/${which}m.txt" && break
		sleep 0.2
	done
done
check_out "serve -p labels the series with that pid" "^proftop_ips\{.*pid=\"$mpid\"\} " \
	sh -c "cat '$TMP/pm.txt' '$TMP/p.err'"
check_out "serve --all serves the one live session" "^proftop_ips\{.*pid=\"$mpid\"\} " \
	sh -c "cat '$TMP/am.txt' '$TMP/a.err'"
# --window 2 once the session is older: the figures cover the last 1 to 2 s
# only (the window moves on in steps of 1 s), so the steps before are out
addr_=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$TMP/p.err" | head -n 1)
cat >"$TMP/window.py" <<'EOF'
import re, sys
vals = {}
for line in open(sys.argv[1], encoding="utf-8").read().splitlines():
    m = re.match(r'^([a-z_:]+)\{(.*)\} (\S+)$', line)
    if m:
        vals.setdefault(m.group(1), []).append((m.group(2), float(m.group(3))))
def get(name):
    for labels, v in vals[name]:
        if name == "proftop_window_seconds" or 'pid="%s"' % sys.argv[2] in labels:
            return v
w = get("proftop_window_seconds")
steps, mean, last = get("proftop_steps"), get("proftop_step_mean_seconds"), get("proftop_last_step")
if w == 0 or last < steps:
    sys.exit(3)  # not yet: the window still holds the first step
assert 1.0 <= w <= 2.0 + 1e-6, w
assert steps >= 1, steps
assert steps * mean <= w + 1e-6, (steps, mean, w)
print("window %.2f s: %d steps of %.4f s, the last numbered %d" % (w, steps, mean, last))
EOF
# (exit 3: not yet, the trainer has not stepped for longer than the window)
for _ in $(seq 150); do
	http "$addr_/metrics" >"$TMP/wm.txt" 2>&1
	python3 "$TMP/window.py" "$TMP/wm.txt" "$mpid" >"$TMP/window.txt" 2>&1
	[ $? -ne 3 ] && break
	sleep 0.2
done
check_out "serve --window 2: the figures cover the last 1 to 2 s" "^window" cat "$TMP/window.txt"
kill -TERM "$mpid"
for p_ in "$ppid_" "$apid"; do
	for _ in $(seq 100); do kill -0 "$p_" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$p_" 2>/dev/null; then
		not_ok "serve ends when the process exits" "still running"
	else
		wait "$p_"
		rc=$?
		if [ $rc -eq 0 ]; then ok "serve ends when the process exits"; else not_ok "serve ends when the process exits" "rc=$rc" "$(cat "$TMP/p.err" "$TMP/a.err")"; fi
	fi
done
done_testing
