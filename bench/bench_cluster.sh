#!/usr/bin/env bash
# bench/bench_cluster.sh - `proftop cluster` drawing 1,024 ranks (128 hosts)
# from a real Prometheus (Debian's) scraping synthetic series of proftop
# serve's shape (tests/e2e/fake_metrics.py): the time of one view
# (`--once`: nine instant queries, the figures, the table), beside the same
# nine queries made with Python's urllib and nothing else (the query cost),
# medians of RUNS alternating runs.
#   bench/bench_cluster.sh [RUNS]
set -u
RUNS=${1:-7}
PROFTOP=${PROFTOP:-build/proftop}
PROM=$(command -v prometheus || true)
[ -n "$PROM" ] || { echo "no prometheus binary (Debian package prometheus): skipped"; exit 0; }
T=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$T"' EXIT
port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
mp=$(port)
pp=$(port)
python3 tests/e2e/fake_metrics.py "$mp" 1024 777 >/dev/null 2>&1 &
pids+=($!)
printf 'global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: big\n    static_configs:\n      - targets: [%s]\n' "'127.0.0.1:$mp'" >"$T/p.yml"
"$PROM" --config.file="$T/p.yml" --storage.tsdb.path="$T/data" --web.listen-address="127.0.0.1:$pp" >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 60); do
	"$PROFTOP" cluster --prometheus "http://127.0.0.1:$pp" --json 2>/dev/null | grep -q '"straggler":777' && break
	sleep 0.5
done
python3 - "$PROFTOP" "http://127.0.0.1:$pp" "$RUNS" <<'PYEOF'
import statistics, subprocess, sys, time, urllib.parse, urllib.request
proftop, url, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
qs = ["proftop_step_mean_seconds", "proftop_steps", "proftop_phase_ratio",
      "irate(proftop_rank_collective_seconds_total[2m])", "proftop_straggler_late_seconds",
      "proftop_hang_seconds", "proftop_hang_waiting", "proftop_hang_missing",
      "proftop_rank_open_range_seconds"]
view, raw = [], []
for _ in range(runs):
    t = time.perf_counter()
    out = subprocess.run([proftop, "cluster", "--prometheus", url, "--once"], capture_output=True, text=True).stdout
    view.append(time.perf_counter() - t)
    t = time.perf_counter()
    for q in qs:
        urllib.request.urlopen(url + "/api/v1/query?query=" + urllib.parse.quote(q), timeout=10).read()
    raw.append(time.perf_counter() - t)
ok = "rank 777" in out
v, r = statistics.median(view) * 1e3, statistics.median(raw) * 1e3
print("cluster view of 1,024 ranks: %.1f ms (median of %d); the nine queries alone %.1f ms; "
      "ratio %.2f; straggler named: %s" % (v, runs, r, v / r, "yes" if ok else "NO"))
PYEOF
